import { test } from 'node:test';
import assert from 'node:assert/strict';
import { healthUrl } from './healthcheck.ts';

test('the health check asks loopback for an all-interfaces address, and the address itself otherwise', () => {
  assert.equal(healthUrl('0.0.0.0:8000'), 'http://127.0.0.1:8000/health');
  assert.equal(healthUrl(':9000'), 'http://127.0.0.1:9000/health');
  assert.equal(healthUrl('[::]:8000'), 'http://[::1]:8000/health');
  assert.equal(healthUrl('[::1]:81'), 'http://[::1]:81/health');
  assert.equal(healthUrl('10.1.2.3:8080'), 'http://10.1.2.3:8080/health');
  assert.equal(healthUrl('nowhere'), null);
});
