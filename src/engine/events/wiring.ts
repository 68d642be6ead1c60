/** The engine's dependencies of issue 21's optional kinds, from the configuration the engine gets. */
import type { Config } from '../../config/defaults.ts';
import type { EventVerifier } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ContentDeps } from '../content.ts';
import { createRelayQuery } from '../relay-query.ts';
import type { OptionalEventDeps } from './handler.ts';
import { createNoteAuthorLookup } from './note-authors.ts';
import { NO_PROVIDER_LOOKUP } from './zap-receipt.ts';

export function optionalEventDeps(input: {
  config: Config;
  contentDeps: ContentDeps;
  verifier: EventVerifier;
  logger: Logger;
}): OptionalEventDeps {
  const { config, contentDeps, verifier, logger } = input;
  return {
    events: config.events,
    content: contentDeps,
    giftWraps: {
      store: contentDeps.store,
      allowedPubkeys: contentDeps.allowedPubkeys,
      processedEventTtlSecs: contentDeps.processedEventTtlSecs,
      minIntervalSecs: config.events.dm_push_min_interval_secs,
      outbound: contentDeps.outbound,
      countInbox: config.inbox.enabled,
      metrics: contentDeps.metrics,
      logger,
    },
    verifier,
    noteAuthor: createNoteAuthorLookup({
      relays: config.nostr.relays,
      queryRelays: createRelayQuery({ logger }),
      verifier,
      queryTimeoutMs: config.nostr.query_timeout_secs * 1000,
      nowMs: () => contentDeps.clock.nowMs(),
    }),
    // nostr-push resolves no lnurl addresses (it fetches kind 0 for names only), so every zap's
    // provider is unknown and the zap unverified: `events.zaps_allow_unverified` decides.
    zapProvider: NO_PROVIDER_LOOKUP,
  };
}
