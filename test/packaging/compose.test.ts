/**
 * compose.yaml (nostr-push on Redis, roles split as a fleet runs them): it parses, names only roles
 * the service has, sets only configuration keys that exist, and the whole fleet's configuration
 * loads without a problem, pointed at the compose file's own Redis.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ROLE_NAMES, type RoleName } from '../../src/config/defaults.ts';
import { loadConfig } from '../../src/config/load.ts';
import { generateSecretKey } from '../../src/nostr/keys.ts';
import { unknownConfigEnvNames } from './config-keys.ts';
import { interpolate, nostrPushServices, readCompose, rolesOf } from './compose-file.ts';

describe('compose.yaml', () => {
  test('parses, and runs nostr-push in several services beside a Redis service', () => {
    const compose = readCompose();
    assert.ok(compose.services.redis, 'a redis service');
    assert.match(compose.services.redis.image ?? '', /^redis:/);
    assert.ok(nostrPushServices(compose).length >= 3, 'the fleet is split over several services');
  });

  test('names only roles that exist, and every role runs somewhere', () => {
    const known = new Set<string>(ROLE_NAMES);
    const running = new Set<string>();
    for (const [name, , env] of nostrPushServices(readCompose())) {
      const roles = rolesOf(env);
      assert.deepEqual(
        roles.filter((role) => !known.has(role)),
        [],
        `service ${name} names roles nostr-push does not have (it has ${ROLE_NAMES.join(', ')})`,
      );
      for (const role of roles) running.add(role);
    }
    assert.deepEqual(
      ROLE_NAMES.filter((role: RoleName) => !running.has(role)),
      [],
      'a role no service runs',
    );
  });

  test('splits the roles as a fleet does: one listener, engine and delivery twice, api with pusher', () => {
    const services = nostrPushServices(readCompose()).map(([name, service, env]) => ({
      name,
      roles: rolesOf(env).sort(),
      replicas: service.deploy?.replicas ?? 1,
    }));
    const withRoles = (...roles: string[]) => services.filter((s) => roles.every((role) => s.roles.includes(role)));
    assert.deepEqual(
      withRoles('listener').map((s) => [s.roles, s.replicas]),
      [[['listener'], 1]],
    );
    assert.deepEqual(
      withRoles('engine', 'delivery').map((s) => [s.roles, s.replicas]),
      [[['delivery', 'engine'], 2]],
    );
    assert.equal(withRoles('api', 'pusher').length, 1, 'one service runs api and pusher together');
  });

  test('each service sets only configuration keys that exist', () => {
    for (const [name, , env] of nostrPushServices(readCompose()))
      assert.deepEqual(unknownConfigEnvNames(Object.keys(env)), [], `service ${name} sets keys the configuration does not have`);
  });

  test("every service's configuration loads without a problem, with the store at the compose Redis", () => {
    const compose = readCompose();
    const redisPort = 6379;
    const vars = { NOSTR_PUSH_SERVICE_KEY: generateSecretKey() };
    for (const [name, service, rawEnv] of nostrPushServices(compose)) {
      const env = Object.fromEntries(Object.entries(rawEnv).map(([key, value]) => [key, interpolate(value, vars)]));
      const { config } = loadConfig({ env });
      const storeUrl = new URL(config.store.url);
      assert.equal(storeUrl.protocol, 'redis:', `${name}: the store is Redis`);
      assert.ok(compose.services[storeUrl.hostname], `${name}: the store host ${storeUrl.hostname} is a compose service`);
      assert.equal(storeUrl.hostname, 'redis');
      assert.equal(Number(storeUrl.port || redisPort), redisPort);
      assert.equal(config.service.private_key_hex, vars.NOSTR_PUSH_SERVICE_KEY, `${name}: the fleet's one service key`);
      const dependsOn = service.depends_on ?? {};
      assert.ok(Array.isArray(dependsOn) ? dependsOn.includes('redis') : dependsOn.redis !== undefined, `${name} starts after Redis`);
    }
  });

  test('the service key is required: compose refuses to start without it', () => {
    const [, , env] = nostrPushServices(readCompose())[0] ?? assert.fail('no nostr-push service');
    assert.throws(() => interpolate(env.NOSTR_PUSH__SERVICE__PRIVATE_KEY_HEX ?? '', {}), /NOSTR_PUSH_SERVICE_KEY/);
  });

  test("the image's /health check runs only where HTTP is served (api or pusher roles)", () => {
    const port = (listenAddr: string) => Number(listenAddr.split(':').pop());
    for (const [name, service, env] of nostrPushServices(readCompose())) {
      const roles = rolesOf(env);
      const servesHttp = roles.includes('api') || roles.includes('pusher');
      assert.equal(service.healthcheck?.disable !== true, servesHttp, `${name}: healthcheck on exactly when it serves HTTP`);
      if (servesHttp)
        assert.ok(
          (service.ports ?? []).some((mapping) => mapping.endsWith(`:${port(loadConfig({ env: {} }).config.server.listen_addr)}`)),
          `${name} publishes the service port`,
        );
    }
  });
});
