/**
 * Storage operations of campaigns (`POST /v1/campaigns`, issue 15): the campaign records with
 * their expansion cursor and counters, the per-(campaign idempotency key, device) delivery
 * claims of seed 000 (`campaign_delivery:{idempotencyKey}`), and the paged scan of every device
 * the expansion walks. Part of {@link StorePort}; implemented by both adapters; tested in
 * `test/store/contract/campaigns.ts`.
 *
 * Model. A campaign is created `running` and due at once. The scheduler role hands it out
 * ({@link CampaignStore.claimDueCampaign}: due again at the lease deadline, so a worker killed
 * mid-page leaves it to the next), expands one page from its `cursor`, queues the page's
 * deliveries, then records the page ({@link CampaignStore.advanceCampaign}: the new cursor and the
 * page's counts, due again at once, or `done`). A page redone after a crash queues the same
 * outbound item ids (a no-op while they wait) and the delivery claims stop anything delivered
 * from going out twice.
 *
 * Claims. Taken by the delivery stage for the in-flight window (600 s) just before the provider
 * call; extended to `campaign_delivery.dedup_ttl_secs` (7 days) once a provider accepts the push;
 * released on the outcomes that send nothing. Release and extension are compare-and-set on the
 * owner token, so a stale attempt never touches a successor's claim. A claim's remaining life
 * ({@link CampaignStore.campaignDeliveryTtlSecs}) beyond the in-flight window means delivered.
 *
 * Tenancy. Every record is keyed by app id; the claim keys carry the app id too.
 */

/** Who a campaign goes to: every user of the app, or the listed pubkeys. */
export type CampaignAudience = 'all' | { pubkeys: string[] };

/** A campaign as the API validated it (the JSON body of `POST /v1/campaigns`). */
export interface CampaignRequest {
  idempotencyKey: string;
  title: string;
  body: string;
  data?: Record<string, string>;
  audience: CampaignAudience;
  /**
   * What the campaign is. Absent: an app's campaign (consent is `campaignsEnabled`, devices need a
   * timezone offset, sends wait for 07:00 local). `announcement`: an operator announcement pushed
   * to the users whose preferences enable the announcement category (they asked for it), sent at
   * once to every device, offset or not; `announcementId` names it.
   */
  kind?: 'announcement';
  announcementId?: number;
}

export type CampaignState = 'running' | 'done';

/** Counters of a campaign, in devices. */
export interface CampaignCounts {
  /** Devices queued: consent given and a timezone offset registered. */
  consenting: number;
  /** Of those, queued for a later local 07:00 (their local time was in 21:00–06:59). */
  deferred: number;
  /** Devices a provider accepted the push for. */
  sent: number;
  /** Devices whose delivery was finally given up (nothing sent). */
  failed: number;
  /** Recipients that reported opening it (once each). */
  opened: number;
}

export type CampaignCounter = keyof CampaignCounts;

export interface NewCampaign {
  appId: string;
  id: string;
  request: CampaignRequest;
  /** SHA-256 (hex) of the canonical request: a second create with the key must match it. */
  requestHash: string;
}

export interface CampaignRecord extends NewCampaign {
  state: CampaignState;
  createdAtMs: number;
  /** Where the next page starts: '' at the beginning; an adapter scan cursor or a list offset. */
  cursor: string;
  counts: CampaignCounts;
}

export type CreateCampaignResult = { created: true } | { created: false; existingId: string; sameRequest: boolean };

export interface ClaimedCampaign {
  campaign: CampaignRecord;
  leaseExpiresAtMs: number;
}

/** One device's owner, as {@link CampaignStore.scanDeviceOwners} walks them. */
export interface DeviceOwner {
  pubkey: string;
  token: string;
}

export interface DeviceOwnerPage {
  entries: DeviceOwner[];
  /** The cursor of the next page; null when the walk is complete. */
  next: string | null;
}

export const ZERO_CAMPAIGN_COUNTS: Readonly<CampaignCounts> = Object.freeze({ consenting: 0, deferred: 0, sent: 0, failed: 0, opened: 0 });

export interface CampaignStore {
  /**
   * Store a new `running` campaign, due at once, unless `(appId, request.idempotencyKey)` names
   * one already: then nothing is written and the first one's id is reported, with whether its
   * request hash matches. Idempotency records live as long as their campaign (no expiry).
   */
  createCampaign(campaign: NewCampaign): Promise<CreateCampaignResult>;

  /** The campaign of `appId` with this id; null when unknown (or another app's). */
  getCampaign(appId: string, id: string): Promise<CampaignRecord | null>;

  /** Hand out a due running campaign (the one due longest), due again `leaseMs` from now. Null when none is due. */
  claimDueCampaign(leaseMs: number): Promise<ClaimedCampaign | null>;

  /**
   * Record an expanded page: the cursor moves to `nextCursor` (null: the campaign is `done` and
   * leaves the schedule), `add` is added to the counters, and the next page is due at once.
   * False (nothing written) when the campaign is gone or done.
   */
  advanceCampaign(appId: string, id: string, nextCursor: string | null, add: Partial<CampaignCounts>): Promise<boolean>;

  /** Add `n` to one counter of a campaign (the delivery stage's sent and failed, the opens). Unknown campaigns are ignored. */
  countCampaign(appId: string, id: string, counter: CampaignCounter, n: number): Promise<void>;

  /**
   * One page of every registered device's (owner, token), from `cursor` ('' to start), about
   * `count` entries. A device registered for the whole walk is returned at least once; one may
   * be returned twice (Redis `HSCAN`), which the delivery claims make harmless.
   */
  scanDeviceOwners(cursor: string, count: number): Promise<DeviceOwnerPage>;

  /** Whether each user enabled campaigns (kind 3083 `campaignsEnabled`), in the order asked. */
  readCampaignConsent(pubkeys: readonly string[]): Promise<boolean[]>;

  /** Take a campaign delivery claim for `ttlSecs`; the owner token, or null when it is held. */
  claimCampaignDelivery(key: string, ttlSecs: number): Promise<string | null>;

  /**
   * {@link claimCampaignDelivery} for many keys in one store call (one transaction, one
   * pipelined round trip): each key's owner token, or null where it is held, in the order given.
   * Keys are taken one after another, so a key repeated in the batch is taken once and refused
   * after. The delivery stage claims every campaign item a turn starts through this.
   */
  claimCampaignDeliveries(keys: readonly string[], ttlSecs: number): Promise<Array<string | null>>;

  /** Give a held claim `ttlSecs` more life if it is still `owner`'s (compare-and-expire). */
  extendCampaignDelivery(key: string, owner: string, ttlSecs: number): Promise<boolean>;

  /** Drop a claim if it is still `owner`'s (compare-and-delete). */
  releaseCampaignDelivery(key: string, owner: string): Promise<boolean>;

  /** Seconds left on a claim (rounded up), or null when none is held. */
  campaignDeliveryTtlSecs(key: string): Promise<number | null>;
}
