/** The engine's dependencies of issue 21's optional kinds, from the configuration the engine gets. */
import type { Config } from '../../config/defaults.ts';
import type { EventVerifier } from '../../nostr/event.ts';
import type { Logger } from '../../observability/logger.ts';
import type { ContentDeps } from '../content.ts';
import { createRelayQuery } from '../relay-query.ts';
import type { OptionalEventDeps } from './handler.ts';
import { createNoteAuthorLookup } from './note-authors.ts';
import { NO_PROVIDER_LOOKUP } from './zap-receipt.ts';
import { createLnurlProviderLookup } from './lnurl-providers.ts';
import { OutboundPolicy, resolverFromEnvironment } from '../../net/public-connect.ts';
import { outboundRefusalReporter } from '../../net/refusals.ts';

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
    // Resolved only when zaps are on: the lookup makes HTTPS requests to wallet domains.
    zapProvider: config.events.zaps
      ? createLnurlProviderLookup({
          relays: [...new Set([...config.nostr.profile_relays, ...config.nostr.relays])],
          queryRelays: createRelayQuery({ logger }),
          verifier,
          timeoutMs: config.nostr.query_timeout_secs * 1000,
          allowLoopback: config.events.lnurl_allow_loopback,
          policy: new OutboundPolicy({
            purpose: 'lnurl',
            rules: { allowLoopback: config.events.lnurl_allow_loopback, allowPrivate: false },
            resolver: resolverFromEnvironment(),
            onRefused: outboundRefusalReporter(contentDeps.metrics, logger),
          }),
          nowMs: () => contentDeps.clock.nowMs(),
          logger,
        })
      : NO_PROVIDER_LOOKUP,
  };
}
