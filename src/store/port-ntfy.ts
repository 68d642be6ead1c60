/**
 * Storage operations of the built-in UnifiedPush (ntfy-compatible) server: durable per-topic
 * message queues with globally ordered ids, read by cursor, expired by TTL.
 * Part of {@link StorePort}; implemented by both adapters; tested in `test/store/contract/ntfy.ts`.
 *
 * The model (seed 004): every publish is appended here before anything else happens, and the
 * topic queues are the only source of truth. Subscribers are cursor-based, never acknowledged:
 * a connection remembers the last position it was sent and asks for what follows it, so a
 * reconnect with `since=<last id>` gets exactly what it missed, and nothing is cleared on send.
 * Messages stay until their expiry, which readers honour at once and the janitor reclaims with
 * {@link NtfyTopicStore.expireNtfyMessages}.
 *
 * Ids (see `ntfy-ids.ts`) are allocated by the store, atomically with the append, in commit
 * order: a message committed after another always has a larger id, whatever process wrote it.
 * That is what lets a reader resume "after id X" without ever missing a message committed later.
 *
 * Append events ({@link NtfyTopicStore.onNtfyAppend}) are advisory: a listener may miss some
 * (another process on the same SQLite file, a Redis pub/sub reconnect). Each event names the id
 * allocated just before it, so a listener that follows them knows when it missed one and reads
 * the store instead; readers also re-read on a timer. A missed event costs latency, never a message.
 *
 * @remarks Deliberately not part of this contract: subscriptions and connections (they live in
 * the pusher process), topic name rules, size limits, wire formats (the ntfy layer checks and
 * builds those), and per-message deletion.
 */

/** An action button (ntfy's `action` struct); the ntfy layer parses and validates them. */
export interface NtfyAction {
  /** 10 alphanumerics, generated when the message is published. */
  id: string;
  action: 'view' | 'broadcast' | 'http' | 'copy';
  label: string;
  clear: boolean;
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  intent?: string;
  extras?: Record<string, string>;
  value?: string;
}

/** An attachment given by URL (`Attach`); this server keeps no files, so never a type, size or expiry. */
export interface NtfyAttachment {
  name: string;
  url: string;
}

/** What a publisher supplies; the store adds the id, the topic, the time and the expiry. */
export interface NtfyMessageContent {
  /** The message text, or the body in padded standard base64 when `encoding` is `base64`. */
  message: string;
  encoding?: 'base64';
  title?: string;
  /** 1 (min) … 5 (max); absent means the default, 3. */
  priority?: number;
  tags?: string[];
  click?: string;
  icon?: string;
  /** `text/markdown` for Markdown messages; absent for plain text. */
  contentType?: string;
  /** At most three (the ntfy layer's rule). */
  actions?: NtfyAction[];
  attachment?: NtfyAttachment;
  /**
   * ntfy's `sequence_id`: the notification this message shows as. A scheduled message carries the
   * id its publisher was answered with, so the message delivered later (with an id of its own,
   * see {@link NtfyScheduledStore}) updates that notification instead of adding one.
   */
  sequenceId?: string;
  /** Set on ntfy's `poll_request` events (`Poll-ID`): the event is `poll_request`, not `message`. */
  pollId?: string;
}

/** A stored message. Optional fields never given are absent, never `undefined`. */
export interface NtfyMessage extends NtfyMessageContent {
  /** 12 characters of `[0-9A-Za-z]`, globally ordered (see `ntfy-ids.ts`). */
  id: string;
  topic: string;
  /** Store-clock time of the append (ms); the ntfy `time` field is this in whole seconds. */
  timeMs: number;
  /**
   * When the message stops being readable (ms); 0 for a message that was never stored
   * ({@link NtfyTopicStore.announceNtfyMessage}), which only live subscribers hear.
   */
  expiresMs: number;
}

/** One append, as {@link NtfyTopicStore.onNtfyAppend} listeners hear it. */
export interface NtfyAppendEvent {
  /** The appended message, exactly as readers will see it. */
  message: NtfyMessage;
  /**
   * The id allocated just before this one in the whole store (any topic), or null when this is
   * the first message the store ever held. A listener whose previous event was not this id has
   * missed appends in between.
   */
  previousId: string | null;
}

/** The answer of {@link NtfyTopicStore.readNtfyMessages}. */
export interface NtfyReadResult {
  /** Unexpired messages of the requested topics after the cursor, in id order. */
  messages: NtfyMessage[];
  /**
   * Where the next read should continue: every unexpired message of the requested topics with an
   * id at or before it has been returned by this read or an earlier one of the same chain. When
   * the read was {@link complete} it is the newest id allocated in the whole store at the time
   * of the read (if that is past the cursor), so an idle subscriber's cursor keeps up with the
   * store; otherwise it is the id of the last message returned, or of the last message examined
   * when the adapter bounded the read's work (see {@link complete}). Null only while the store
   * has never allocated an id and the cursor was null.
   */
  position: string | null;
  /**
   * False when the read stopped early: read again from {@link position}. It stops at `limit`
   * messages; an adapter may also bound the work of one read (SQLite reading many topics at once
   * walks the store's messages in id order, a bounded number per read), and then it returns fewer.
   */
  complete: boolean;
}

/** One read of {@link NtfyTopicStore.readNtfyMessagesMany}: the arguments of a {@link NtfyTopicStore.readNtfyMessages}. */
export interface NtfyReadRequest {
  topics: readonly string[];
  afterId: string | null;
  /** A positive integer. */
  limit: number;
}

export interface NtfyTopicStore {
  /**
   * Append a message to `topic` durably, allocating its id (globally ordered, see the module
   * comment) from the store clock, and return it as every reader will see it. Expires after
   * `ttlMs` (a positive number of ms, counted from the allocated id's time). Then wakes
   * {@link onNtfyAppend} listeners, advisorily. The topic is taken as given (the ntfy layer
   * validates names).
   */
  appendNtfyMessage(topic: string, content: NtfyMessageContent, ttlMs: number): Promise<NtfyMessage>;

  /**
   * ntfy's `Cache: no`: allocate the message's id in the global order as an append would, and tell
   * {@link onNtfyAppend} listeners, but store nothing (its `expiresMs` is 0). Only subscribers live
   * at that moment hear it: a reader of the store, a listener that missed the event (and bridges
   * with a read) and a later `since=` never see it, as in ntfy.
   */
  announceNtfyMessage(topic: string, content: NtfyMessageContent): Promise<NtfyMessage>;

  /**
   * Unexpired messages of any of `topics` with an id greater than `afterId` (null: from the
   * start), in id order, at most `limit` (a positive integer). `afterId` need not be a stored id:
   * any 12-character id works as a position (`since=<time>` uses a synthetic one); anything
   * else is refused with a RangeError. `[]` topics read nothing. See {@link NtfyReadResult} for
   * how to continue.
   */
  readNtfyMessages(topics: readonly string[], afterId: string | null, limit: number): Promise<NtfyReadResult>;

  /**
   * Many reads in one store round trip: result `i` is what
   * `readNtfyMessages(requests[i].topics, requests[i].afterId, requests[i].limit)` would answer
   * at one moment during the call (the same moment for all of them: one snapshot). `[]` reads
   * nothing. Refused with a RangeError, reading nothing, when any request is refused alone (a
   * limit that is not a positive integer, an `afterId` that is not an id); callers merging the
   * reads of many subscribers check each request first (`requireNtfyReadRequest` in
   * `ntfy-shared.ts`), so one bad request cannot fail the others.
   *
   * Why: a burst of subscriptions (10,000 phones reconnecting) makes as many catch-up reads; one
   * read each costs a Redis command (or an SQLite transaction) and its garbage per subscriber,
   * while one call serves every read of an event-loop turn (`turn-batching.ts`).
   */
  readNtfyMessagesMany(requests: readonly NtfyReadRequest[]): Promise<NtfyReadResult[]>;

  /**
   * For each of `topics`, its newest unexpired message with an id at or before `upToId` (ntfy's
   * `since=latest`); topics without one are left out. In id order.
   */
  latestNtfyMessages(topics: readonly string[], upToId: string): Promise<NtfyMessage[]>;

  /** The newest id the store has allocated (for any topic), or null when it never allocated one. */
  ntfyHeadId(): Promise<string | null>;

  /**
   * True when `id` is an unexpired message of any topic. This decides whether `since=<id>` is a
   * cursor: like ntfy (its issue #336), an id of any topic resumes a subscription of others, and
   * an id the store does not hold (expired, or from another server) replays everything.
   */
  hasNtfyMessage(id: string): Promise<boolean>;

  /**
   * Delete messages whose expiry is at or before now, at most about `limit` (a positive
   * integer) per call; returns how many were deleted. Readers already skip expired messages, so
   * this only reclaims space; call it until it returns less than `limit` to catch up a backlog.
   * A message that expires before an older message of the same topic (a shorter TTL) may wait
   * until that older one expires too.
   */
  expireNtfyMessages(limit: number): Promise<number>;

  /**
   * Call `listener` after each append, with the message and the id allocated before it: on
   * SQLite for the appends of this process, right after their commit; on Redis for the appends of
   * every process sharing the store, over pub/sub, shortly after (so also after an append of this
   * process has resolved). Events reach a listener in strictly increasing id order. Advisory
   * (see the module comment): events may be missed, which {@link NtfyAppendEvent.previousId}
   * reveals. Returns the unsubscribe function. A throwing listener is logged and ignored.
   *
   * This is what lets the pusher hand a message to its live subscribers without reading it back:
   * while the events it hears form an unbroken chain, it has seen every message of every topic.
   */
  onNtfyAppend(listener: (event: NtfyAppendEvent) => void): () => void;

  /**
   * Resolves once {@link onNtfyAppend} listeners hear every append committed from then on that
   * this store hears at all: on Redis once the pub/sub subscription the first listener started
   * is confirmed (an append before that is not heard, and nothing says it was missed); on SQLite
   * at once. Never rejects: a subscription that failed resolves too (readers fall back on re-reads).
   * Without listeners it resolves at once.
   */
  ntfyAppendsHeard(): Promise<void>;
}

/** A message waiting for its delivery time (ntfy's scheduled delivery: `Delay`, `At`, `In`). */
export interface NtfyScheduledMessage extends NtfyMessageContent {
  /** 12 characters of `[0-9A-Za-z]`, random: the id its publisher was answered with. */
  id: string;
  topic: string;
  /** When it is due (ms, store clock). */
  deliverAtMs: number;
  /** The TTL the delivered message gets, counted from its delivery (ms). */
  ttlMs: number;
  /** Always {@link id}: what the delivered message carries as its `sequence_id`. */
  sequenceId: string;
}

/**
 * Scheduled ntfy messages, delivered by the pusher when due. Part of {@link StorePort};
 * implemented by both adapters; tested in `test/store/contract/ntfy-scheduled.ts`.
 *
 * A scheduled message is not in its topic until it is delivered: it then gets an id of its own in
 * the global order (ids are positions subscribers resume from, and a position handed out days
 * before would be behind every cursor by then), with the id its publisher was answered with as its
 * `sequenceId`, so ntfy clients show the delivery as that notification.
 *
 * Delivery is exactly once across processes: {@link releaseDueNtfyMessages} appends a due message
 * and removes it from the schedule in one atomic step (SQLite: one transaction; Redis: one script
 * in the topic's slot, after a claim with a lease keeps other processes off it meanwhile), so a
 * crash at any instant either leaves it scheduled (delivered later, once) or delivered.
 *
 * @remarks Not part of this contract: delay parsing and bounds (the ntfy layer checks them), and
 * cancelling or replacing a scheduled message (ntfy's sequence IDs, which this server refuses).
 */
export interface NtfyScheduledStore {
  /**
   * Keep `content` for delivery to `topic` at `deliverAtMs`, as a message expiring `ttlMs` (a
   * positive number of ms) after its delivery. Returns it with its new random id.
   */
  scheduleNtfyMessage(topic: string, content: NtfyMessageContent, deliverAtMs: number, ttlMs: number): Promise<NtfyScheduledMessage>;

  /**
   * The messages of `topics` still waiting (due or not, until delivered), by delivery time then id,
   * at most `limit` (a positive integer). What `?scheduled=1` lists.
   */
  readNtfyScheduled(topics: readonly string[], limit: number): Promise<NtfyScheduledMessage[]>;

  /**
   * Deliver up to `limit` (a positive integer) messages due at or before now (the oldest first
   * where the store keeps one due index; a sharded one goes shard by shard): each is appended to its topic (a new id, its scheduled id as `sequenceId`, expiring its
   * TTL after now) and leaves the schedule in the same atomic step, and append listeners hear it
   * as any append. Returns the messages delivered by this call; a message another process is
   * delivering at the same time is delivered by exactly one of them. Call until it returns fewer
   * than `limit` to catch up a backlog.
   */
  releaseDueNtfyMessages(limit: number): Promise<NtfyMessage[]>;
}
