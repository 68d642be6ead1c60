import { ConfigError, loadConfig } from './config/load.ts';
import { SERVICE_VERSION, startService, type RunningService } from './service.ts';
import { consoleUrl, logStartupSummary } from './startup-summary.ts';
import { operatorStartupProblem } from './startup-errors.ts';
import { showFirstAdminKey, showOn } from './console/index.ts';
import { testClockFromEnvironment } from './util/file-clock.ts';
import { createLogger } from './observability/logger.ts';
import { generateSecretKey, publicKeyOf } from './nostr/keys.ts';
import { npubEncode, nsecEncode } from './nostr/nip19.ts';
import { runDoctor } from './doctor.ts';
import { DLQ_USAGE, dlqCommand } from './cli-dlq.ts';
import { STORE_USAGE, storeCommand } from './cli-store.ts';
import { Secp256k1BackendError } from './nostr/secp256k1.ts';
import { appsCommand } from './platform/apps-cli.ts';
import { limitHeapGrowth, semiSpaceMibInForce, SERVER_NODE_FLAGS } from './util/heap-growth.ts';

const USAGE = `nostr-push — push notifications for Nostr apps

usage:
  nostr-push serve [--config FILE]    run the service (roles from NOSTR_PUSH__ROLES, default all)
  nostr-push doctor [--config FILE]   check configuration, store, relays and provider credentials
  nostr-push keygen                   print a new service key (hex, nsec, pubkey, npub)
  nostr-push apps keys create APP --role send|admin   create an API key (printed once)
  nostr-push apps keys list [APP]     list API keys
  nostr-push apps keys revoke ID      revoke an API key
  nostr-push dlq list|replay|delete   list, replay or delete dead letters (nostr-push dlq help)
  nostr-push store migrate-layout --from divine --to cluster --source URL
                                      copy a divine Redis into the cluster key layout (nostr-push store help)
  nostr-push healthcheck [--config FILE]  exit 0 when this machine's /health (at server.listen_addr) answers 200
  nostr-push version | --version      the version
  nostr-push help                     this text

configuration: defaults < YAML file (--config or NOSTR_PUSH_CONFIG) < NOSTR_PUSH__SECTION__KEY environment
`;

function configPathFrom(args: string[]): string | undefined {
  const i = args.indexOf('--config');
  if (i === -1) return undefined;
  const path = args[i + 1];
  if (!path) throw new ConfigError(['--config needs a file path']);
  return path;
}

export async function main(argv: string[]): Promise<void> {
  const [command = 'help', ...args] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serveCommand(args);
      case 'doctor':
        process.exitCode = await runDoctor(loadConfig({ configPath: configPathFrom(args) }), (line) => console.log(line));
        return;
      case 'keygen':
        return keygenCommand();
      case 'apps':
        process.exitCode = await appsCommand(
          args,
          () => loadConfig({ configPath: configPathFrom(args) }),
          (line) => console.log(line),
        );
        return;
      case 'dlq':
        if (args[0] === 'help' || args.length === 0) {
          process.stdout.write(DLQ_USAGE);
          return;
        }
        process.exitCode = await dlqCommand(args);
        return;
      case 'store':
        if (args[0] === 'help' || args.length === 0) {
          process.stdout.write(STORE_USAGE);
          return;
        }
        process.exitCode = await storeCommand(args);
        return;
      case 'version':
      case '--version':
      case '-V':
        process.stdout.write(`nostr-push ${SERVICE_VERSION}\n`);
        return;
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return;
      default:
        process.stderr.write(`unknown command "${command}"\n\n${USAGE}`);
        process.exitCode = 2;
    }
  } catch (err) {
    if (err instanceof ConfigError || err instanceof Secp256k1BackendError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
}

function keygenCommand(): void {
  const secret = generateSecretKey();
  const pubkey = publicKeyOf(secret);
  console.log(`private_key_hex: ${secret}`);
  console.log(`nsec:            ${nsecEncode(secret)}`);
  console.log(`pubkey:          ${pubkey}`);
  console.log(`npub:            ${npubEncode(pubkey)}`);
  console.log('\nset it with NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX, or as service.private_key_hex in the config file');
}

async function serveCommand(args: string[]): Promise<void> {
  const loaded = loadConfig({ configPath: configPathFrom(args) });
  const logger = createLogger({ level: loaded.config.log.level, format: loaded.config.log.format });
  logger.info({ sources: loaded.sources, roles: loaded.config.roles }, 'configuration loaded');
  const heapGrowingPercent = limitHeapGrowth();
  if (heapGrowingPercent !== null) logger.info({ heapGrowingPercent }, 'V8 heap growth over the live heap bounded');
  const semiSpaceMib = semiSpaceMibInForce();
  if (semiSpaceMib === null)
    logger.warn(
      { recommended: SERVER_NODE_FLAGS.join(' ') },
      `started without --max-semi-space-size: V8's default young generation costs ~5 % more CPU per push; start node with ${SERVER_NODE_FLAGS.join(' ')} (npm start, the binary, the image and the systemd unit do)`,
    );
  else logger.info({ semiSpaceMib }, 'V8 young generation sized by the command line');
  const clock = testClockFromEnvironment(process.env, logger);
  let service: RunningService;
  try {
    service = await startService(loaded.config, { logger, clock });
  } catch (err) {
    const problem = operatorStartupProblem(err);
    if (problem === null) throw err;
    // One line the operator can act on; exit now, whatever the half-made start left open.
    process.stderr.write(`${problem}\n`, () => process.exit(1));
    return;
  }
  // The npub is what app developers need; print it plainly as well as in the log.
  process.stderr.write(`nostr-push service npub: ${service.key.npub}\n`);
  // Only once the port is bound: a start that fails before makes no key.
  if (service.httpAddress && service.config.roles.includes('api') && service.config.console.enabled)
    await showFirstAdminKey({
      store: service.store,
      show: showOn(process.stderr),
      logger,
      npub: service.key.npub,
      consoleUrl: consoleUrl(service.httpAddress, service.config.server.public_url),
    });
  logStartupSummary(logger, {
    version: SERVICE_VERSION,
    config: service.config,
    httpAddress: service.httpAddress,
    apps: service.apps.all.map((app) => ({ id: app.id, npub: app.key.npub, config: app.config })),
  });

  let signalled = false;
  const onSignal = (name: string) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal: name }, 'shutting down');
    service.supervisor.shutdown();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  const unexpected = await service.supervisor.stopped;
  await service.stop();
  // A critical task that died must restart the process (Kubernetes, systemd): exit 1.
  process.exit(unexpected || service.supervisor.unexpectedExit ? 1 : 0);
}
