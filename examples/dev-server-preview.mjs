// A dev server in a session, opened through its preview URL: the app is written and started
// in the background (it outlives the run that started it), then fetched through the edge
// proxy the way a browser would reach it.
//
//   SANDBOX_API_URL=… SANDBOX_API_KEY=… EDGE_URL=http://127.0.0.1:8081 node examples/dev-server-preview.mjs
// (EDGE_URL is the edge proxy's address; ./scripts/up writes it to dev.env.)
import { request } from 'node:http';
import { Sandbox } from '@sandbox/sdk';

const APP = `require('node:http')
  .createServer((req, res) => res.end('hello from ' + req.url + ' in the sandbox\\n'))
  .listen(3000);`;

/** A GET of `url` sent to the edge proxy (a browser would resolve the preview host to it). */
function viaEdge(url, headers) {
  const edge = new URL(process.env.EDGE_URL ?? 'http://127.0.0.1:8081');
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: edge.hostname,
        port: edge.port,
        path: target.pathname,
        headers: { ...headers, host: target.host },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const sandbox = await Sandbox.create({ preview: { private: true } });
try {
  await sandbox.files.write('server.js', APP);
  await sandbox.exec(
    'nohup node server.js >server.log 2>&1 & ' +
      'for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3000) 2>/dev/null && break; sleep 0.1; done',
  );
  const url = `${sandbox.previewUrl()}/greeting`;
  console.log(`preview: ${url}`);
  const refused = await viaEdge(url, {});
  console.log(`without the token: ${refused.status}`);
  const page = await viaEdge(url, sandbox.previewHeaders());
  console.log(`with the token: ${page.status} ${page.body.trim()}`);
  if (page.status !== 200) process.exitCode = 1;
} finally {
  await sandbox.delete();
}
