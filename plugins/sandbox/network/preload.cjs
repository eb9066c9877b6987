/**
 * Loaded into every node process inside a plinth sandbox (`--require`, via
 * NODE_OPTIONS): Node 20's `fetch` ignores HTTP(S)_PROXY, so it and the
 * `http`/`https` global agents are routed through the sandbox's proxy, as a
 * CONNECT tunnel over its Unix socket. Nothing else can leave: the namespace
 * has only loopback. CommonJS and dependency-free, because it runs before the
 * program.
 */
'use strict';
const net = require('node:net');
const tls = require('node:tls');
const http = require('node:http');
const https = require('node:https');

const SOCKET = process.env.PLINTH_SANDBOX_PROXY_SOCKET;

/** A TCP stream to host:port through the proxy, or the proxy's refusal as an error. */
function tunnel(host, port, done) {
  const authority = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  const socket = net.connect({ path: SOCKET });
  let head = Buffer.alloc(0);
  const fail = (error) => {
    socket.destroy();
    done(error);
  };
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    socket.off('data', onData);
    socket.off('error', fail);
    const text = head.subarray(0, end).toString('latin1');
    const rest = head.subarray(end + 4);
    if (!/^HTTP\/1\.[01] 200/.test(text)) {
      const error = new Error(rest.toString('utf8').trim() || `plinth sandbox: ${authority} refused (${text.split('\r\n')[0]})`);
      error.code = 'EPLINTHSANDBOX';
      return fail(error);
    }
    if (rest.length > 0) socket.unshift(rest);
    done(null, socket);
  };
  socket.on('data', onData);
  socket.once('error', fail);
  socket.once('connect', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
}

function secure(socket, options, done) {
  const stream = tls.connect({ ...options, socket, servername: options.servername || (net.isIP(options.host) ? undefined : options.host) });
  stream.once('secureConnect', () => done(null, stream));
  stream.once('error', done);
}

if (SOCKET) {
  class TunnelAgent extends http.Agent {
    createConnection(options, done) {
      tunnel(options.host || 'localhost', options.port || 80, done);
    }
  }
  class SecureTunnelAgent extends https.Agent {
    createConnection(options, done) {
      tunnel(options.host || 'localhost', options.port || 443, (error, socket) => (error ? done(error) : secure(socket, options, done)));
    }
  }
  http.globalAgent = new TunnelAgent();
  https.globalAgent = new SecureTunnelAgent();

  // fetch: the dispatcher is undici's Agent (not exported by Node 20), found once undici has loaded, with a connector that tunnels.
  const original = globalThis.fetch;
  if (typeof original === 'function') {
    const KEY = Symbol.for('undici.globalDispatcher.1');
    let installed;
    const install = () =>
      (installed ??= original('data:,').then(() => {
        const Agent = globalThis[KEY].constructor;
        globalThis[KEY] = new Agent({
          connect(options, done) {
            const https = options.protocol === 'https:';
            const host = String(options.hostname).replace(/^\[|\]$/g, '');
            const port = Number(options.port) || (https ? 443 : 80);
            tunnel(host, port, (error, socket) => {
              if (error) return done(error);
              if (!https) return done(null, socket);
              secure(socket, { host, servername: options.servername || (net.isIP(host) ? undefined : host), ALPNProtocols: ['http/1.1'] }, done);
            });
          },
        });
      }));
    Object.defineProperty(globalThis, 'fetch', {
      configurable: true,
      writable: true,
      enumerable: true,
      value: async function fetch(input, init) {
        await install();
        return original(input, init);
      },
    });
  }
}
