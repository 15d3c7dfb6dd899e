package studio

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

const (
	testerAnswer = "Hello from the fake model."
	testerStream = "A streamed hello, one word at a time, from the fake."
	testerPrompt = "Say hello in one short sentence."
)

// exchange is what the tester's right pane showed for one request.
type exchange struct {
	Status   string `json:"status"`
	Request  string `json:"request"`
	Sent     string `json:"sent"` // the request's body as shown
	Body     string `json:"body"`
	Response string `json:"response"`
	Alert    string `json:"alert"`
}

// TestServiceTester drives the tester as a user would: an OpenAI chat
// completion with a pasted API key, an AG-UI run whose event stream shows
// while it is still coming, MCP without a token (401) and then with one
// got from an OAuth client's id and secret (tools/list), an A2A agent card,
// GET /api/agents, and a 404 shown with its JSON error. The page's answers
// are checked against the server's own (the fake model's requests, the
// API called directly), and no secret typed in is shown unmasked.
func TestServiceTester(t *testing.T) {
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{Text: testerAnswer},
		paced(testerStream, 2*time.Second, llm.Usage{InputTokens: 10, OutputTokens: 12}),
	)
	env := newStudio(t, &servertest.Options{
		Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)},
		Agents:    []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3}},
		MCP:       true,
		Memory:    true, // the chat page, shown after sign-in, lists conversations
	})
	clientID, clientSecret := env.OAuthClient(t, "agents/*")
	res := env.browse(t, testerScript, map[string]string{"key": env.Key, "clientID": clientID, "clientSecret": clientSecret})
	var out struct {
		OpenAI, AGUI, MCPNoToken, Token, Tools, Card, Agents, NotFound, Broken exchange
		// Partial is the AG-UI body seen while the page still said it was
		// receiving; Events the event count it showed at the end.
		Partial string `json:"partial"`
		Events  string `json:"events"`
		// TokenFilled says the token field held the token after Get token.
		TokenFilled bool `json:"tokenFilled"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}

	// OpenAI: the fake's answer, for the agent's prompt, the key masked.
	if out.OpenAI.Status != "HTTP 200 OK" || !strings.Contains(out.OpenAI.Body, testerAnswer) || !strings.Contains(out.OpenAI.Body, `"chat.completion"`) {
		t.Errorf("chat completion: status %q, body %q; want 200 with the fake's answer %q", out.OpenAI.Status, out.OpenAI.Body, testerAnswer)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), testerPrompt) {
		t.Errorf("the fake model got %d requests, the first %q; want the template's prompt %q", len(reqs), firstBody(reqs), testerPrompt)
	}
	if want := "Authorization: Bearer " + env.Key[:6] + "••••••••"; !strings.Contains(out.OpenAI.Request, want) || !strings.HasPrefix(out.OpenAI.Request, "POST "+env.URL+"/v1/chat/completions\n") {
		t.Errorf("raw request %q; want POST %s/v1/chat/completions with %q", out.OpenAI.Request, env.URL, want)
	}

	// AG-UI: events shown before the stream ended, and all of them at the end.
	if !strings.Contains(out.Partial, "RUN_STARTED") || strings.Contains(out.Partial, "RUN_FINISHED") {
		t.Errorf("while the run streamed, the page showed %q; want its first events and not yet RUN_FINISHED", out.Partial)
	}
	for _, ev := range []string{"data: {", "RUN_STARTED", "TEXT_MESSAGE_CONTENT", `"delta":"streamed "`, "RUN_FINISHED"} {
		if !strings.Contains(out.AGUI.Body, ev) {
			t.Errorf("the AG-UI stream as shown lacks %q: %q", ev, out.AGUI.Body)
		}
	}
	if n := strings.Count(out.AGUI.Body, "data: "); !strings.Contains(out.Events, itoa(n)+" events") {
		t.Errorf("the page counts %q; the stream it shows has %d events", out.Events, n)
	}
	if !strings.Contains(out.AGUI.Request, "X-CSRF-Token: ") || !strings.Contains(out.AGUI.Request, "••••••••") {
		t.Errorf("the AG-UI request %q; want its CSRF token shown masked", out.AGUI.Request)
	}

	// MCP: refused without a token, then tools/list with one.
	if !strings.HasPrefix(out.MCPNoToken.Status, "HTTP 401") || !strings.Contains(out.MCPNoToken.Alert, "invalid_token") {
		t.Errorf("MCP without a token: status %q, alert %q; want 401 invalid_token", out.MCPNoToken.Status, out.MCPNoToken.Alert)
	}
	if out.Token.Status != "HTTP 200 OK" || !out.TokenFilled || !strings.Contains(out.Token.Sent, "client_secret="+clientSecret[:6]+"••••••••") {
		t.Errorf("get token: status %q, filled %v, request body %q; want 200, the token field filled and the secret masked", out.Token.Status, out.TokenFilled, out.Token.Sent)
	}
	if out.Tools.Status != "HTTP 200 OK" || !strings.Contains(out.Tools.Body, `"agent_helper"`) || !strings.Contains(out.Tools.Request, "Authorization: Bearer ") {
		t.Errorf("tools/list: status %q, body %q; want 200 listing agent_helper", out.Tools.Status, out.Tools.Body)
	}

	// A2A: the agent's card, as the server serves it.
	var card struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(out.Card.Body), &card); err != nil || card.Name != "helper" || out.Card.Status != "HTTP 200 OK" {
		t.Errorf("agent card: status %q, body %q (%v); want helper's card", out.Card.Status, out.Card.Body, err)
	}

	// Plain HTTP, and an error as the server gives it.
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	var agents struct {
		Data []struct{ Name string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(out.Agents.Body), &agents); err != nil || len(agents.Data) != 1 || agents.Data[0].Name != "helper" {
		t.Errorf("GET /api/agents shown as %q (%v); want the one agent helper", out.Agents.Body, err)
	}
	resp, body := c.Do("GET", "/api/agents/nope", "")
	var apiErr struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &apiErr); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /api/agents/nope = %d %s", resp.StatusCode, body)
	}
	if !strings.HasPrefix(out.NotFound.Status, "HTTP 404") || !strings.Contains(out.NotFound.Alert, "404: "+apiErr.Error.Message) || out.NotFound.Body != string(body) {
		t.Errorf("the 404: status %q, alert %q, body %q; want the server's answer %s", out.NotFound.Status, out.NotFound.Alert, out.NotFound.Body, body)
	}

	// A request that never reached the server says so.
	if out.Broken.Status != "No answer" || !strings.HasPrefix(out.Broken.Alert, "Network error: ") {
		t.Errorf("a request the network dropped: status %q, alert %q; want No answer and the network error", out.Broken.Status, out.Broken.Alert)
	}

	for _, x := range []exchange{out.OpenAI, out.AGUI, out.MCPNoToken, out.Token, out.Tools, out.Card, out.Agents, out.NotFound} {
		for name, secret := range map[string]string{"API key": env.Key, "client secret": clientSecret} {
			if strings.Contains(x.Request+x.Sent, secret) {
				t.Errorf("the raw request shows the %s unmasked: %s\n%s", name, x.Request, x.Sent)
			}
		}
	}
}

func firstBody(reqs []llmtest.Recorded) string {
	if len(reqs) == 0 {
		return ""
	}
	return string(reqs[0].Body)
}

// testerScript sends each request from the tester and reports what its
// right pane showed.
const testerScript = `
const raw = (name) => page.getByRole('region', { name, exact: true })
const status = () => page.getByRole('region', { name: 'Raw response' }).getByRole('status')
const finished = () => page.getByText(/finished after/).waitFor()
// sendAndRead clicks Send and waits for the whole answer.
const sendAndRead = async () => {
  await page.getByRole('button', { name: 'Send', exact: true }).click()
  await finished()
  return read()
}
const read = async () => {
  const body = raw('Response body').or(raw('Response body (event stream, as it arrives)'))
  const alert = page.getByRole('region', { name: 'Raw response' }).getByRole('alert')
  const sent = raw('Request body')
  return {
    status: (await status().innerText()).trim(),
    request: await raw('Request line and headers').innerText(),
    sent: (await sent.count()) ? await sent.innerText() : '',
    body: (await body.count()) ? await body.innerText() : '',
    alert: (await alert.count()) ? await alert.innerText() : '',
  }
}
const tab = (name) => page.getByRole('tab', { name, exact: true }).click()
const template = (label) => page.getByRole('combobox', { name: 'Template' }).selectOption({ label })

await signIn()
await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Service tester' }).click()
await page.getByRole('heading', { level: 1, name: 'Service tester' }).waitFor()
// The template names the workspace's agent once the agents have come.
await page.waitForFunction(() => [...document.querySelectorAll('textarea')].some((t) => t.value.includes('"model": "helper"')))
step('tester open, template filled in with helper')

// OpenAI with a pasted API key; the body as sent, unformatted.
await page.getByRole('radio', { name: 'An API key' }).check()
await page.getByLabel('API key', { exact: true }).fill(args.key)
const openai = await sendAndRead()
step('openai: ' + openai.status)
await shot('tester-openai')

// AG-UI over the session: the stream shows while it comes.
await page.getByRole('radio', { name: 'My signed-in session' }).check()
await tab('AG-UI')
await page.getByRole('button', { name: 'Send', exact: true }).click()
const streamBody = raw('Response body (event stream, as it arrives)')
await streamBody.waitFor()
let partial = ''
for (let i = 0; i < 100; i++) {
  const receiving = await page.getByText('still receiving…').count()
  const text = await streamBody.innerText()
  if (receiving && text.includes('RUN_STARTED')) { partial = text; break }
  await page.waitForTimeout(50)
}
await finished()
const agui = await read()
const events = await page.getByText(/\d+ events/).innerText()
step('agui: ' + agui.status + ', ' + events)
await shot('tester-agui')

// MCP: no token first, then one from the client's id and secret.
await tab('MCP')
await template('List tools (tools/list)')
const mcpNoToken = await sendAndRead()
step('mcp without a token: ' + mcpNoToken.status)
await page.getByLabel('Client ID').fill(args.clientID)
await page.getByLabel('Client secret').fill(args.clientSecret)
await page.getByRole('button', { name: 'Get token' }).click()
await finished()
const token = await read()
const tokenFilled = (await page.getByLabel('Access token').inputValue()).length > 20
const tools = await sendAndRead()
step('mcp tools/list: ' + tools.status)
await shot('tester-mcp')

await tab('A2A')
const card = await sendAndRead()
step('a2a card: ' + card.status)

await tab('HTTP')
const agents = await sendAndRead()
step('GET /api/agents: ' + agents.status)
await page.getByRole('textbox', { name: 'Path' }).fill('/api/agents/nope')
// The error's JSON as the server wrote it, not reformatted.
await page.getByRole('checkbox', { name: 'Format JSON' }).uncheck()
const notFound = await sendAndRead()
step('GET /api/agents/nope: ' + notFound.status)
// Chromium logs the 404 asked for as a failed resource: expected, once.
const logged = consoleErrors.findIndex((e) => /status of 404 \(Not Found\)/.test(e))
if (logged >= 0) consoleErrors.splice(logged, 1)
await shot('tester-404')

// A request the network drops (the browser refuses it): the page says so.
await page.route('**/health', (r) => r.abort('connectionrefused'))
await template('Health check (GET /health)')
await page.getByRole('button', { name: 'Send', exact: true }).click()
await page.getByRole('region', { name: 'Raw response' }).getByRole('alert').waitFor()
const broken = await read()
step('a dropped request: ' + broken.status + ', ' + broken.alert)
const dropped = consoleErrors.findIndex((e) => /ERR_CONNECTION_REFUSED/.test(e))
if (dropped >= 0) consoleErrors.splice(dropped, 1)

result = { openai, agui, partial, events, mcpNoToken, token, tokenFilled, tools, card, agents, notFound, broken }
`
