import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FcmCredentialsError } from './delivery/fcm/oauth.ts';
import { listenFailure, operatorStartupProblem, storeOpenFailure } from './startup-errors.ts';

const errno = (code: string, message = code) => Object.assign(new Error(message), { code });

test('listen failures say where and why in words', () => {
  assert.equal(listenFailure('0.0.0.0', 8000, errno('EADDRINUSE')).message, 'cannot listen on 0.0.0.0:8000: address already in use');
  assert.equal(
    listenFailure('::', 80, errno('EACCES')).message,
    'cannot listen on [::]:80: permission denied (ports under 1024 need a privilege)',
  );
  assert.equal(listenFailure('10.9.9.9', 1, errno('EWHATEVER', 'odd')).message, 'cannot listen on 10.9.9.9:1: odd');
});

test('store failures name the store and the driver’s reason, once', () => {
  const wrapped = new Error('cannot open the Redis store at redis://h:1: x', { cause: new Error('connect ECONNREFUSED h:1') });
  assert.equal(storeOpenFailure('redis://h:1', wrapped).message, 'cannot open the store redis://h:1: connect ECONNREFUSED h:1');
  assert.equal(
    storeOpenFailure('redis+cluster', new RangeError('cannot open the Redis store at a: b')).message,
    'cannot open the Redis store at a: b',
  );
  assert.equal(
    storeOpenFailure('sqlite:/x', errno('EACCES', 'EACCES: permission denied')).message,
    'cannot open the store sqlite:/x: EACCES: permission denied',
  );
});

test('only failures an operator fixes get one line; anything else keeps its stack', () => {
  assert.equal(operatorStartupProblem(new FcmCredentialsError('FCM credentials /a cannot be read')), 'FCM credentials /a cannot be read');
  assert.equal(operatorStartupProblem(listenFailure('h', 1, errno('EADDRINUSE'))), 'cannot listen on h:1: address already in use');
  assert.equal(operatorStartupProblem(new TypeError('a bug')), null);
});
