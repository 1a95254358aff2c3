// A client of `tether mcp` built on the official MCP TypeScript SDK. It
// connects to the server named by $TETHER_MCP_CMD (JSON argv), lists the
// tools, makes the calls in argv[2] (JSON [{name, arguments}]) and prints
// one JSON object: the server instructions, the tools, the results and the
// questions it was asked. With argv[3] == "elicit" it declares the
// elicitation capability and approves each question once.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const calls = JSON.parse(process.argv[2]);
const elicit = process.argv[3] === "elicit";
const asked = [];
const client = new Client({ name: "ts-sdk-test", version: "1" },
  { capabilities: elicit ? { elicitation: {} } : {} });
if (elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return { action: "accept", content: { decision: "once" } };
  });
}
const argv = JSON.parse(process.env.TETHER_MCP_CMD);
const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), env: process.env, stderr: "inherit" });
await client.connect(transport);
const tools = await client.listTools();
const results = [];
for (const c of calls) {
  // callTool validates structuredContent against the tool's outputSchema.
  results.push(await client.callTool(c, undefined, { timeout: 120000 }));
}
console.log(JSON.stringify({
  instructions: client.getInstructions(),
  tools: tools.tools,
  results,
  asked,
}));
await client.close();
