// The TypeScript SDK's client (@modelcontextprotocol/client 2.4) calling a resolved tool,
// examples/files.py's delete_folder, which asks a form first. Run with the server's URL:
// `node typescript_client.mjs http://127.0.0.1:8000/mcp` (tests/deploy/test_typescript_client.py
// runs it as written, against both generations).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, negotiation = 'auto'] = process.argv.slice(2);
const client = new Client(
  { name: 'files-app', version: '1.0.0' },
  {
    capabilities: { elicitation: { form: {} } }, // this app can show its user a form
    versionNegotiation: { mode: negotiation }, // 'auto': 2026-07-28 where the server has it
  },
);

// One handler for both generations. A legacy server sends elicitation/create in the middle
// of the call; on 2026-07-28 the call returns its questions, and the client passes each one
// to this handler, then retries the call with the answers and the request state itself.
client.setRequestHandler('elicitation/create', async (request) => {
  console.error(`asked: ${request.params.message}`); // shown to the user
  return { action: 'accept', content: { ok: true } }; // what the user answered
});

await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const result = await client.callTool({ name: 'delete_folder', arguments: { path: '/tmp/project' } });
const version = client.getNegotiatedProtocolVersion();
console.log(JSON.stringify({ version, result: result.content[0].text }));
await client.close();
