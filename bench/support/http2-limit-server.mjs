// The server side of the HTTP/2 limit probe (http2-limit.ts): plain `node:http2` over cleartext,
// answering every POST with a small JSON body as soon as its body has arrived. Prints its port.
import { createServer } from 'node:http2';

const ANSWER = JSON.stringify({ name: 'projects/probe/messages/0' });
const server = createServer({ settings: { maxConcurrentStreams: 1000 } }, (request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(ANSWER);
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('message', () => server.close(() => process.exit(0)));
