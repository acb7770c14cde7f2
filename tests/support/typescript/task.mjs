// One tool call as a background task through the TypeScript SDK's client 2.x and
// @modelcontextprotocol/ext-tasks, on 2026-07-28, answering the task's questions from a
// script; prints one JSON line: {"result"} or {"error"}, and "asked".
//
//   node task.mjs '{"url": ..., "tool": ..., "arguments": {...},
//                   "answers": [{"action": "accept", "content": {...}}], "sampled": "text"}'
//
// ext-tasks sends 2026-07-28 task traffic through a raw request path of the host's
// (`rawDispatch`); this one POSTs the JSON-RPC request to the same endpoint and reads a JSON
// or an event-stream answer. TASK_DEBUG=1 prints each raw request and answer to stderr.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const spec = JSON.parse(process.argv[2]);
const asked = [];
const answers = [...(spec.answers ?? [])];
const capabilities = { elicitation: { form: {}, url: {} }, sampling: {} };
const clientInfo = { name: 'mcp-resolve-tests', version: '1.0.0' };

const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: 'auto' } });

let nextId = 1;
async function rawDispatch(unframed, options) {
    const request = { jsonrpc: '2.0', id: `task-${nextId++}`, ...unframed };
    const response = await fetch(spec.url, {
        method: 'POST',
        headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': client.getNegotiatedProtocolVersion(),
            'mcp-method': request.method,
            ...(request.params?.name ? { 'mcp-name': request.params.name } : {}),
        },
        body: JSON.stringify(request),
        signal: options?.signal,
    });
    const body = await response.text();
    if (process.env.TASK_DEBUG) process.stderr.write('>> ' + JSON.stringify(request) + '\n<< ' + body.slice(0, 1500) + '\n');
    if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
        const data = body.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim());
        const messages = data.filter(Boolean).map((text) => JSON.parse(text));
        return messages.find((message) => message.id === request.id) ?? messages.at(-1);
    }
    return JSON.parse(body);
}

let out;
try {
    await client.connect(new StreamableHTTPClientTransport(new URL(spec.url)));
    const session = createTaskSessionFromClient(client, {
        endpointId: 'mcp-resolve-tests',
        rawDispatch,
        v2RequestFraming: {
            protocolVersion: client.getNegotiatedProtocolVersion(),
            clientInfo,
            clientCapabilities: capabilities,
        },
        onInputRequest: async (request) => {
            const params = request.params ?? {};
            if (request.kind === 'sampling') {
                asked.push({ kind: 'sampling' });
                return { model: 'scripted', role: 'assistant', content: { type: 'text', text: spec.sampled ?? '' } };
            }
            asked.push({ kind: request.kind, mode: params.mode ?? 'form', message: params.message ?? '' });
            return answers.shift() ?? { action: 'cancel' };
        },
    });
    try {
        const execution = await session.callTool(spec.tool, spec.arguments ?? {});
        const { outcome } = await execution.settle();
        out = { era: client.getNegotiatedProtocolVersion(), result: resultFromTaskOutcome(outcome) };
    } finally {
        await session.close();
    }
} catch (error) {
    out = { error: { name: error?.constructor?.name ?? typeof error, code: error?.code ?? null, message: String(error?.message ?? error) } };
}
out.asked = asked;
process.stdout.write(JSON.stringify(out) + '\n');
await client.close().catch(() => {});
process.exit(0);
