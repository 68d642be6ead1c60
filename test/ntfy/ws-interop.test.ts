/**
 * Interop of the ntfy WebSocket server with the `ws` package as the client (as ntfy's own Go
 * client and the Android app's OkHttp would talk to it), over both servers (`ntfy.websocket`):
 * the client's pings, its close code echoed, a message over ntfy's read limit closed with 1009,
 * and the server's own close after a poll, each as `ws` sees it. (Chromium's client is left for
 * when the console issue brings a browser to the tests.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NTFY_WEBSOCKET_KINDS } from '../../src/config/defaults.ts';
import { openWs, publish } from './client.ts';
import { startNtfyTestServer, type NtfyTestServer } from './harness.ts';

for (const websocket of NTFY_WEBSOCKET_KINDS) {
  describe(`ntfy WebSockets and the ws client (ntfy.websocket: ${websocket})`, () => {
    let server: NtfyTestServer;
    let wsBase: string;
    before(async () => {
      server = await startNtfyTestServer({ config: { websocket } });
      wsBase = server.baseUrl.replace('http', 'ws');
    });
    after(() => server.close());

    test('a ping from the client is answered with its payload; the subscription stays', async () => {
      const client = await openWs(`${wsBase}/upInteropPing${websocket}/ws`);
      await client.nextJson('open');
      client.socket.ping(Buffer.from('are you there'));
      assert.equal((await client.pongs.next('pong')).toString(), 'are you there');
      const published = await publish(server.baseUrl, `/upInteropPing${websocket}?up=1`, 'after the ping');
      assert.equal((await client.nextMessage('a message')).id, published.body.id);
      client.close();
      assert.equal(await client.closed, 1005, 'ws reports a close without a code as 1005');
    });

    test('the client’s close code is echoed back to it', async () => {
      const client = await openWs(`${wsBase}/upInteropClose${websocket}/ws`);
      await client.nextJson('open');
      client.socket.close(4001, 'leaving');
      assert.equal(await client.closed, 4001);
    });

    test('a message over ntfy’s 64-byte read limit is closed with 1009', async () => {
      const client = await openWs(`${wsBase}/upInteropBig${websocket}/ws`);
      await client.nextJson('open');
      client.socket.send('x'.repeat(65));
      assert.equal(await client.closed, 1009);
    });

    test('a poll is closed by the server with 1000 once its messages are sent', async () => {
      const published = await publish(server.baseUrl, `/upInteropPoll${websocket}?up=1`, 'polled');
      const client = await openWs(`${wsBase}/upInteropPoll${websocket}/ws?poll=1`);
      assert.equal((await client.nextMessage('the polled message')).id, published.body.id);
      assert.equal(await client.closed, 1000);
    });
  });
}
