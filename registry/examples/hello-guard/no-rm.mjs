// A before_tool hook (plinth's hook protocol: one JSON document on stdin, one on stdout):
// refuses the `rm` tool, allows every other.
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { context = {} } = JSON.parse(input || '{}');
const refused = context.tool === 'rm';
process.stdout.write(JSON.stringify(refused ? { allow: false, message: 'hello-guard: the rm tool is not allowed' } : { allow: true }));
