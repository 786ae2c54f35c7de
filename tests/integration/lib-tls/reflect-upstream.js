// reflect-upstream.js CERT KEY ADDR: a TLS upstream that gives every request
// back to its client in the ways real ones do (tls-reflect.sh).  Port 9443
// speaks HTTP/2 and HTTP/1.1 (ALPN); 9444 takes WebSocket upgrades.
//   /echo       the request line and every header, Content-Length
//   /split?n=N  the same in pieces of N bytes (chunks in HTTP/1.1, DATA in h2)
//   /close      the same, delimited by closing (HTTP/1.1 only)
//   /redirect   302 with a Location that keeps the query
//   /header     the x-api-key and authorization fields back as x-echo-*
//   /reason     HTTP/1.1 400 whose reason phrase holds x-api-key
//   /gzip       the echo, gzip-coded
//   /sse        three events 300 ms apart, then the echo as an event
//   /ws         (9444) 101, then the echo in two text frames cut inside
//               the x-api-key value with a ping between, then close
'use strict';
const http2 = require('http2'), https = require('https'), fs = require('fs');
const zlib = require('zlib'), crypto = require('crypto');
const [certf, keyf, addr] = process.argv.slice(2);
const tls = { cert: fs.readFileSync(certf), key: fs.readFileSync(keyf) };

function echo(req) {
  let t = `${req.method} ${req.url}\n`;
  for (const [k, v] of Object.entries(req.headers)) t += `${k}: ${v}\n`;
  return t;
}

function handle(req, res) {
  const u = new URL(req.url, 'https://x');
  const text = echo(req), h1 = req.httpVersionMajor === 1;
  const host = req.headers[':authority'] || req.headers.host;
  switch (u.pathname) {
  case '/echo':
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
    return res.end(text);
  case '/split': {
    const n = Math.max(1, Number(u.searchParams.get('n')) || 1), b = Buffer.from(text);
    let i = 0;
    res.writeHead(200, { 'content-type': 'text/plain' });
    const step = () => {
      if (i >= b.length) return res.end();
      res.write(b.subarray(i, i + n));
      i += n;
      setImmediate(step);
    };
    return step();
  }
  case '/close':
    if (!h1) break;
    res.socket.end('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n' + text);
    return;
  case '/redirect':
    res.writeHead(302, { location: `https://${host}/landing${u.search}`, 'content-length': 0 });
    return res.end();
  case '/header':
    res.writeHead(200, { 'x-echo-key': req.headers['x-api-key'] || '-',
      'x-echo-auth': req.headers.authorization || '-', 'content-length': 0 });
    return res.end();
  case '/reason':
    if (!h1) break;
    res.statusMessage = 'Bad key ' + (req.headers['x-api-key'] || '-');
    res.writeHead(400, { 'content-length': 0 });
    return res.end();
  case '/gzip': {
    const z = zlib.gzipSync(text);
    res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': z.length });
    return res.end(z);
  }
  case '/sse': {
    let k = 0;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const t = setInterval(() => {
      res.write(`data: event ${k}\n\n`);
      if (++k === 3) {
        clearInterval(t);
        res.end('data: ' + text.replace(/\n/g, ' ') + '\n\n');
      }
    }, 300);
    return;
  }
  }
  res.writeHead(404, { 'content-length': 0 });
  res.end();
}

function frame(op, fin, payload) {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([(fin ? 0x80 : 0) | op, n])
    : Buffer.from([(fin ? 0x80 : 0) | op, 126, n >> 8, n & 255]);
  return Buffer.concat([head, payload]);
}

http2.createSecureServer({ ...tls, allowHTTP1: true }, handle).listen(9443, addr);
const ws = https.createServer(tls, (req, res) => { res.writeHead(404); res.end(); });
ws.on('upgrade', (req, sock) => {
  const accept = crypto.createHash('sha1')
    .update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  let hs = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    `Sec-WebSocket-Accept: ${accept}\r\n\r\n`;
  const b = Buffer.from(echo(req)), key = req.headers['x-api-key'] || '';
  let cut = b.indexOf(key);
  cut = cut < 0 ? b.length >> 1 : cut + (key.length >> 1);
  sock.write(hs);
  sock.write(frame(1, false, b.subarray(0, cut)));
  sock.write(frame(9, true, Buffer.from('ping')));
  sock.write(frame(0, true, b.subarray(cut)));
  sock.end(frame(8, true, Buffer.from([3, 232])));
});
ws.listen(9444, addr);
setTimeout(() => console.log('ready'), 100);
