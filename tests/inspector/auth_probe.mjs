// What an MCP TypeScript SDK client reports when syncd refuses its bearer token (tests/test_lan_auth.py).
// Usage: node auth_probe.mjs SDK_DIR URL MODE [TOKEN]; SDK_DIR is @modelcontextprotocol/client (SDK v2, the
// Inspector's) or @modelcontextprotocol/sdk (v1, most clients in the field); MODE "plain" (no OAuth
// provider, as the Inspector CLI) or "oauth" (an OAuth-capable client: a minimal in-memory
// OAuthClientProvider). Prints one JSON line:
// {"connected": bool, "error": "<the client's error message>", "redirected": bool}.
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [sdkDir, url, mode, token] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(path.join(sdkDir, rel)).href);
const v1 = existsSync(path.join(sdkDir, "dist/esm/client/index.js"));
const { Client } = await load(v1 ? "dist/esm/client/index.js" : "dist/index.mjs");
const { StreamableHTTPClientTransport } = await load(v1 ? "dist/esm/client/streamableHttp.js" : "dist/index.mjs");

let redirected = false;
const provider = {
  get redirectUrl() { return "http://127.0.0.1:1/callback"; },
  get clientMetadata() {
    return { client_name: "syncd-auth-probe", redirect_uris: ["http://127.0.0.1:1/callback"] };
  },
  _info: undefined,
  _tokens: undefined,
  _verifier: "",
  clientInformation() { return this._info; },
  saveClientInformation(info) { this._info = info; },
  tokens() { return this._tokens; },
  saveTokens(t) { this._tokens = t; },
  redirectToAuthorization() { redirected = true; },
  saveCodeVerifier(v) { this._verifier = v; },
  codeVerifier() { return this._verifier; },
};

const opts = {};
if (mode === "oauth") opts.authProvider = provider;
if (token) opts.requestInit = { headers: { Authorization: `Bearer ${token}` } };
const transport = new StreamableHTTPClientTransport(new URL(url), opts);
const client = new Client({ name: "syncd-auth-probe", version: "1" });
try {
  await client.connect(transport);
  console.log(JSON.stringify({ connected: true, error: null, redirected }));
  await client.close();
} catch (err) {
  console.log(JSON.stringify({ connected: false, error: String(err?.message ?? err), redirected }));
}
