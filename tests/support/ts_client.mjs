// One tools/call from the TypeScript SDK's client 2.x (@modelcontextprotocol/client), as a
// new user writes it, over Streamable HTTP. Run by tests/deploy/test_typescript_client.py:
//
//   node ts_client.mjs MODULES SCENARIO_JSON
//
// MODULES is the node_modules folder `make typescript` fills; SCENARIO_JSON holds `url`,
// `negotiation` ("legacy", the client's default, or "auto"), `tool`, `arguments`,
// `replies` (the user's answers to elicitation/create, in turn), `capabilities` and,
// optionally, `timeoutMs` (the call's request timeout) and `headers` (sent with every
// request, e.g. a bearer token). Prints one JSON line per question
// asked ({"asked": params}, at once, so the test can act while the call waits), then
// {"done": {version, result, sent}} or {"failed": {name, code, message, sent}}, `sent` being
// the methods the client posted.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, raw] = process.argv.slice(2);
const scenario = JSON.parse(raw);
const entry = join(modules, '@modelcontextprotocol', 'client', 'dist', 'index.mjs');
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(entry).href);

const say = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const options = { capabilities: scenario.capabilities ?? {} };
if (scenario.negotiation === 'auto') options.versionNegotiation = { mode: 'auto' };
const client = new Client({ name: 'ts-client-test', version: '1.0.0' }, options);
const replies = [...(scenario.replies ?? [])];
if (options.capabilities.elicitation) {
  client.setRequestHandler('elicitation/create', async (request) => {
    say({ asked: request.params });
    return replies.shift() ?? { action: 'cancel' };
  });
}
if (options.capabilities.sampling) {
  client.setRequestHandler('sampling/createMessage', async (request) => {
    say({ asked: request.params });
    return { model: 'ts-model', role: 'assistant', content: { type: 'text', text: scenario.said ?? 'yes' } };
  });
}
const sent = []; // the methods the client posted, in order
const watching = async (input, init) => {
  try {
    const body = JSON.parse(init?.body ?? 'null');
    for (const message of Array.isArray(body) ? body : [body]) if (message?.method) sent.push(message.method);
  } catch {}
  return fetch(input, init);
};
try {
  const requestInit = scenario.headers ? { headers: scenario.headers } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(scenario.url), { fetch: watching, requestInit }));
  const request = { name: scenario.tool, arguments: scenario.arguments ?? {} };
  const callOptions = scenario.timeoutMs ? { timeout: scenario.timeoutMs } : undefined;
  const result = await client.callTool(request, callOptions);
  say({ done: { version: client.getNegotiatedProtocolVersion?.() ?? null, result, sent } });
} catch (error) {
  await new Promise((resolve) => setTimeout(resolve, 300)); // let a cancellation go out
  say({ failed: { name: error?.constructor?.name ?? 'Error', code: error?.code ?? null, message: String(error?.message ?? error), sent } });
} finally {
  await client.close().catch(() => {});
}
