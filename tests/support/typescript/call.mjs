// One tool call through the official TypeScript SDK's client (@modelcontextprotocol/client 2.x)
// over Streamable HTTP, answering the server's questions from a script; prints one JSON line.
//
//   node call.mjs '{"url": ..., "mode": "legacy" | "auto", "tool": ..., "arguments": {...},
//                   "capabilities": {"elicitation": {"form": {}, "url": {}}, "sampling": {}},
//                   "answers": [{"action": "accept", "content": {...}}, ...],
//                   "sampled": "text", "timeoutMs": 60000}'
//
// Output: {"era", "result"} or {"error": {"name", "code", "message"}}, and "asked": the
// questions the handlers saw, in order ({"method", "mode", "message"}).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const spec = JSON.parse(process.argv[2]);
const asked = [];
const answers = [...(spec.answers ?? [])];

const client = new Client(
    { name: 'mcp-resolve-tests', version: '1.0.0' },
    {
        capabilities: spec.capabilities ?? {},
        versionNegotiation: { mode: spec.mode ?? 'legacy' },
    },
);
if (spec.capabilities?.elicitation) {
    client.setRequestHandler('elicitation/create', async (request) => {
        const params = request.params;
        asked.push({ method: 'elicitation/create', mode: params.mode ?? 'form', message: params.message });
        const answer = answers.shift() ?? { action: 'cancel' };
        if (spec.announce) {
            process.stdout.write(JSON.stringify({ announce: asked.at(-1) }) + '\n');
        }
        return answer;
    });
}
if (spec.capabilities?.sampling) {
    client.setRequestHandler('sampling/createMessage', async (request) => {
        const last = request.params.messages.at(-1);
        asked.push({ method: 'sampling/createMessage', mode: 'sampling', message: last?.content?.text ?? '' });
        return { model: 'scripted', role: 'assistant', content: { type: 'text', text: spec.sampled ?? '' } };
    });
}

const transport = new StreamableHTTPClientTransport(new URL(spec.url));
let out;
try {
    await client.connect(transport);
    const result = await client.callTool(
        { name: spec.tool, arguments: spec.arguments ?? {} },
        { timeout: spec.timeoutMs ?? 60000 },
    );
    out = { era: client.getNegotiatedProtocolVersion?.() ?? null, result };
} catch (error) {
    out = { error: { name: error?.constructor?.name ?? typeof error, code: error?.code ?? null, message: String(error?.message ?? error) } };
}
out.asked = asked;
process.stdout.write(JSON.stringify(out) + '\n');
await client.close().catch(() => {});
process.exit(0);
