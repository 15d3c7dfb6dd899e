package studio

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/internal/egress"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/tool"
)

// zooYAML is the OpenAPI document the tools test pastes.
const zooYAML = `openapi: 3.0.3
info: {title: Zoo, version: "1.0"}
servers: [{url: "https://zoo.example.com"}]
paths:
  /animals:
    get:
      operationId: listAnimals
      summary: List the animals
      responses: {"200": {description: ok}}
  /animals/{id}:
    get:
      operationId: showAnimal
      summary: Show one animal
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
`

// TestToolsPage turns a tool off, adds an MCP server, tests it, imports an
// OpenAPI document and deletes both through their dialogs, checking the
// store; then a guest sees the page and the Agents page without their
// write controls.
func TestToolsPage(t *testing.T) {
	mcpURL := servertest.EchoMCP(t, "s3cret-token")
	g, err := (&egress.Policy{Allow: []string{"127.0.0.1"}}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.NewOpenAI(t)
	env := newStudio(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}, Memory: true,
		Builtins: &tool.BuiltinOptions{HTTPClient: g.Client()}})
	guest, err := env.Identity.CreateUser(t.Context(), identity.NewUser{Email: guestEmail, Password: guestPassword})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Identity.AddMember(t.Context(), identity.CLI, env.Workspace.ID, guest.ID, identity.RoleGuest); err != nil {
		t.Fatal(err)
	}

	res := env.browse(t, toolsScript, map[string]string{"mcp": mcpURL, "doc": zooYAML})
	var out struct {
		Switch, ServerRow, Test, Imported, Imports string
		ServersAfter, ImportsAfter                 int
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	settings, err := env.Store.ToolSettings().List(t.Context(), env.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 1 || settings[0].Tool != "calculator" || settings[0].Enabled {
		t.Errorf("stored tool settings %+v; want calculator turned off", settings)
	}
	if out.Switch != "false" {
		t.Errorf("the calculator switch reads aria-checked=%q after turning it off", out.Switch)
	}
	if !strings.Contains(out.ServerRow, "echo") || !strings.Contains(out.ServerRow, "Connected") || !strings.Contains(out.ServerRow, "Bearer token") {
		t.Errorf("the new server's row reads %q; want echo, connected, with a bearer token", out.ServerRow)
	}
	if !strings.Contains(out.Test, "Connected: 1 tool") || !strings.Contains(out.Test, "echo__echo") || !strings.Contains(out.Test, "Echo the text.") {
		t.Errorf("the test of echo reads %q; want connected with echo__echo and its description", out.Test)
	}
	for _, op := range []string{"zoo__listAnimals", "zoo__showAnimal"} {
		if !strings.Contains(out.Imported, op) || !strings.Contains(out.Imports, op) {
			t.Errorf("the import shows %q and the imports table %q; want operation %s in both", out.Imported, out.Imports, op)
		}
	}
	if out.ServersAfter != 0 || out.ImportsAfter != 0 {
		t.Errorf("after deleting, the page shows %d servers and %d imports; want none", out.ServersAfter, out.ImportsAfter)
	}
	if rows, err := env.Store.MCPServers().List(t.Context(), env.Workspace.ID); err != nil || len(rows) != 0 {
		t.Errorf("stored MCP servers after delete: %+v (%v); want none", rows, err)
	}
	if rows, err := env.Store.OpenAPIImports().List(t.Context(), env.Workspace.ID); err != nil || len(rows) != 0 {
		t.Errorf("stored OpenAPI imports after delete: %+v (%v); want none", rows, err)
	}

	// A guest reads both pages and sees no control that would 403.
	res = env.browse(t, guestScript, map[string]string{"email": guestEmail, "password": guestPassword})
	var seen map[string]int
	if err := json.Unmarshal(res.Result, &seen); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	for what, n := range seen {
		if n != 0 {
			t.Errorf("a guest sees %d %s", n, what)
		}
	}
}

const toolsScript = `
await signIn()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Tools' }).click()
await page.getByRole('heading', { level: 1, name: 'Tools' }).waitFor()
const sw = page.getByRole('switch', { name: 'Enable calculator' })
await sw.click()
await page.waitForFunction(() => document.querySelector('[role=switch][aria-label="Enable calculator"]')?.getAttribute('aria-checked') === 'false')
step('calculator turned off')

const add = page.getByRole('form', { name: 'Add an MCP server' })
await add.getByRole('textbox', { name: 'Server name' }).fill('echo')
await add.getByRole('textbox', { name: 'URL', exact: true }).fill(args.mcp)
await add.getByLabel('Bearer token').fill('s3cret-token')
await add.getByRole('button', { name: 'Add server' }).click()
const servers = page.getByRole('table', { name: 'MCP servers and their health' })
const row = servers.getByRole('row').filter({ hasText: 'echo' })
await row.waitFor()
step('echo added')
await row.getByRole('button', { name: 'Test echo' }).click()
const test = page.getByRole('region', { name: 'Test of echo' })
await test.getByText('echo__echo').waitFor()
step('echo tested')

const imp = page.getByRole('form', { name: 'Import an OpenAPI document' })
await imp.getByRole('textbox', { name: 'Import name' }).fill('zoo')
await imp.getByRole('textbox', { name: 'OpenAPI 3 document' }).fill(args.doc)
await imp.getByRole('button', { name: 'Import', exact: true }).click()
const imported = page.getByRole('region', { name: 'Imported from zoo' })
await imported.waitFor()
const imports = page.getByRole('table', { name: 'OpenAPI imports and their operations' })
await imports.getByRole('row').filter({ hasText: 'zoo' }).waitFor()
step('zoo imported')
await shot('tools-light-en')
const res = {
  Switch: await sw.getAttribute('aria-checked'),
  ServerRow: (await row.innerText()).replace(/\s+/g, ' '),
  Test: (await test.innerText()).replace(/\s+/g, ' '),
  Imported: (await imported.innerText()).replace(/\s+/g, ' '),
  Imports: (await imports.innerText()).replace(/\s+/g, ' '),
}

await page.getByRole('button', { name: 'Delete import zoo' }).click()
let dialog = page.getByRole('dialog', { name: 'Delete import zoo?' })
await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
await dialog.waitFor({ state: 'hidden' })
await page.getByText('No OpenAPI documents imported yet.').waitFor()
await page.getByRole('button', { name: 'Delete server echo' }).click()
dialog = page.getByRole('dialog', { name: 'Delete MCP server echo?' })
await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
await dialog.waitFor({ state: 'hidden' })
await page.getByText('No MCP servers yet.').waitFor()
step('zoo and echo deleted')
res.ServersAfter = await servers.count()
res.ImportsAfter = await imports.count()
result = res
`

// guestScript signs in as the guest and counts, on Tools and Agents, the
// write controls a guest must not be offered.
const guestScript = `
await signIn(args.email, args.password)
await page.goto(url + '/tools')
await page.getByRole('switch', { name: 'Enable calculator' }).waitFor()
await page.getByText('Only admins and owners change tools').waitFor()
const seen = {
  'enabled tool switches': await page.locator('[role=switch]:not([disabled])').count(),
  'Add server buttons': await page.getByRole('button', { name: 'Add server' }).count(),
  'Import buttons': await page.getByRole('button', { name: 'Import', exact: true }).count(),
}
await page.goto(url + '/agents')
await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor()
await page.getByText('No agents yet.').waitFor()
seen['New agent buttons'] = await page.getByRole('button', { name: 'New agent' }).count()
result = seen
`
