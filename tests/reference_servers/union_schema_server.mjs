// A stdio MCP server whose tool input schema is a zod union, listed the way servers that build
// their JSON Schema from zod themselves list it (zereight/gitlab-mcp's get_ci_catalog_resource
// before its fix, gitlab-mcp#551): the official TypeScript SDK's low-level Server, and zod 4's
// own z.toJSONSchema, which writes a union as anyOf at the schema's root. MCP wants
// `"type": "object"` at the root (the Python SDK's client refuses a tool without it), so the
// server adds it and keeps the union beside it. The Anthropic API refuses such a tool
// ("input_schema does not support oneOf, allOf, or anyOf at the top level").
//   node tests/reference_servers/union_schema_server.mjs
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const CatalogResource = z.union([
  z.object({ id: z.string().min(1).describe("the catalog resource's global id") }),
  z.object({ full_path: z.string().min(1).describe("the project's full path") }),
]);

const server = new Server({ name: "union-schema", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "get_catalog_resource",
      description: "Get one CI/CD catalog resource by id or by project path",
      inputSchema: { type: "object", ...z.toJSONSchema(CatalogResource) },
    },
    {
      name: "ping",
      description: "Answer pong",
      inputSchema: z.toJSONSchema(z.object({})),
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = CatalogResource.safeParse(request.params.arguments ?? {});
  if (request.params.name === "ping") return { content: [{ type: "text", text: "pong" }] };
  if (!args.success) return { content: [{ type: "text", text: args.error.message }], isError: true };
  return { content: [{ type: "text", text: JSON.stringify(args.data) }] };
});
await server.connect(new StdioServerTransport());
