package studio

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// The other people of the settings test, besides the owner who signs in.
const (
	bobEmail   = "bob@example.com"
	danEmail   = "dan@example.com"
	carolEmail = "carol@example.com"
	// providerSecret is the provider key the owner saves: it must never
	// come back, to the page or into the database in clear.
	providerSecret = "sk-ant-settings-test-0123456789abcdef"
)

// TestSettingsPage walks the settings page as its owner — renames the
// workspace, saves a provider key, makes an API key and revokes it,
// invites people, changes a role and removes a member — checking the
// store after each, then signs in as a guest, who sees no write control
// and whose page asks the server for nothing a guest may not read.
func TestSettingsPage(t *testing.T) {
	env := newStudio(t, &servertest.Options{Tasks: true}) // the approvals inbox asks the task API
	ctx := t.Context()
	ids := map[string]string{}
	for _, p := range []struct {
		email, password string
		role            identity.Role
	}{{guestEmail, guestPassword, identity.RoleGuest}, {bobEmail, "", identity.RoleMember}, {danEmail, "", identity.RoleMember}} {
		u, err := env.Identity.CreateUser(ctx, identity.NewUser{Email: p.email, Password: p.password})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Identity.AddMember(ctx, identity.CLI, env.Workspace.ID, u.ID, p.role); err != nil {
			t.Fatal(err)
		}
		ids[p.email] = u.ID
	}

	res := env.browse(t, settingsScript, map[string]string{
		"secret": providerSecret, "bob": bobEmail, "dan": danEmail, "carol": carolEmail,
		"guestEmail": guestEmail, "guestPassword": guestPassword,
	})
	var out struct {
		APIKey         string   `json:"api_key"`
		Clipboard      string   `json:"clipboard"`
		KeyBefore      int      `json:"key_before"`
		KeyAfter       int      `json:"key_after"`
		InvitationLink string   `json:"invitation_link"`
		SecretShown    []string `json:"secret_shown"`
		KeyShown       []string `json:"key_shown"`
		GuestControls  []string `json:"guest_controls"`
		GuestRequests  []string `json:"guest_requests"`
		GuestRefused   []string `json:"guest_refused"`
		GuestNotes     int      `json:"guest_notes"`
		GuestNav       []string `json:"guest_nav"`
		GuestAudit     []string `json:"guest_audit"`
		AuditNav       string   `json:"audit_nav"`
		SettingsNav    string   `json:"settings_nav"`
		AxeSerious     []string `json:"axe_serious"`
		LastOwnerError string   `json:"last_owner_error"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}

	// The workspace is renamed in the store.
	ws, err := env.Store.Workspaces().Get(ctx, env.Workspace.ID)
	if err != nil || ws.Name != "lab" {
		t.Errorf("workspace after rename = %+v, %v; want the name lab", ws, err)
	}

	// The provider key is stored sealed: in the credentials row, and
	// nowhere in clear in the database files; the page never showed it
	// after saving, and the API lists it without it.
	cred, err := env.Store.Credentials().Get(ctx, env.Workspace.ID, "anthropic")
	if err != nil {
		t.Fatalf("the anthropic key was not stored: %v", err)
	}
	if len(cred.Ciphertext) == 0 || bytes.Contains(cred.Ciphertext, []byte(providerSecret)) {
		t.Errorf("the stored credential is %d bytes holding the key in clear: not sealed", len(cred.Ciphertext))
	}
	files, _ := filepath.Glob(env.DBPath + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(providerSecret)) {
			t.Errorf("%s holds the provider key in clear", filepath.Base(f))
		}
	}
	for _, where := range out.SecretShown {
		t.Errorf("the page showed the saved provider key: %s", where)
	}
	c := servertest.Client{T: t, Base: env.URL, Key: env.Key}
	resp, data := c.Do("GET", "/api/credentials", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"anthropic"`) || strings.Contains(string(data), providerSecret) {
		t.Errorf("GET /api/credentials = %d %s; want anthropic listed without its key", resp.StatusCode, data)
	}

	// The API key was shown once, copied, worked, and is refused once
	// revoked; the store has it revoked.
	if !strings.HasPrefix(out.APIKey, identity.APIKeyPrefix) {
		t.Fatalf("the page showed %q as the new API key", out.APIKey)
	}
	if out.Clipboard != out.APIKey {
		t.Errorf("Copy put %q on the clipboard; want the key", out.Clipboard)
	}
	if out.KeyBefore != http.StatusOK || out.KeyAfter != http.StatusUnauthorized {
		t.Errorf("GET /api/agents with the key = %d before revoking and %d after; want 200 and 401", out.KeyBefore, out.KeyAfter)
	}
	for _, where := range out.KeyShown {
		t.Errorf("the API key was shown again: %s", where)
	}
	bot := servertest.Client{T: t, Base: env.URL, Key: out.APIKey}
	if resp, data := bot.Do("GET", "/api/agents", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked key = %d %s; want 401", resp.StatusCode, data)
	}
	keys, err := env.Store.APIKeys().List(ctx, env.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ci *store.APIKey
	for i := range keys {
		if keys[i].Name == "ci" {
			ci = &keys[i]
		}
	}
	if ci == nil || ci.RevokedAt == nil || ci.Role != store.RoleMember || !strings.HasPrefix(out.APIKey, ci.Prefix) {
		t.Errorf("the key ci in the store = %+v; want it revoked, role member, with the shown key's prefix", ci)
	}

	// One invitation is left (carol's, admin; the one for anyone was
	// revoked), and its link opens it.
	invs, err := env.Store.Invitations().List(ctx, env.Workspace.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 1 || invs[0].Email != carolEmail || invs[0].Role != store.RoleAdmin {
		t.Errorf("invitations in the store = %+v; want carol's alone, as admin", invs)
	}
	if !strings.HasPrefix(out.InvitationLink, env.URL+identity.InvitationPath) {
		t.Fatalf("the invitation link shown is %q", out.InvitationLink)
	}
	r, err := http.Get(out.InvitationLink)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Errorf("GET the invitation link = %d; want 200", r.StatusCode)
	}

	for _, v := range out.AxeSerious {
		t.Errorf("axe-core: %s", v)
	}
	// The last owner's step down was refused, and said so.
	if !strings.Contains(out.LastOwnerError, "owner") {
		t.Errorf("the page's alert on the last owner stepping down = %q; want the server's reason", out.LastOwnerError)
	}
	if m, err := env.Store.Members().Get(ctx, env.Workspace.ID, ownerID(t, env)); err != nil || m.Role != store.RoleOwner {
		t.Errorf("the owner after the refused step down = %+v, %v; want owner", m, err)
	}

	// bob is an admin now; dan is gone.
	if m, err := env.Store.Members().Get(ctx, env.Workspace.ID, ids[bobEmail]); err != nil || m.Role != store.RoleAdmin {
		t.Errorf("bob = %+v, %v; want admin", m, err)
	}
	if _, err := env.Store.Members().Get(ctx, env.Workspace.ID, ids[danEmail]); err == nil {
		t.Error("dan is still a member after Remove")
	}

	// The guest: no write control, a note for each section they may not
	// use, and no request refused (the harness fails on console errors,
	// which a 403 would log, too).
	for _, c := range out.GuestControls {
		t.Errorf("the guest's settings page offers %s", c)
	}
	if out.GuestNotes != 4 {
		t.Errorf("the guest's page shows %d of the 4 notes on what only admins do", out.GuestNotes)
	}
	for _, r := range out.GuestRefused {
		t.Errorf("the guest's page made a request the server refused: %s", r)
	}
	if slices.Contains(out.GuestNav, out.AuditNav) || !slices.Contains(out.GuestNav, out.SettingsNav) {
		t.Errorf("the guest's nav links to %q; want %q but not %q (admins only)", out.GuestNav, out.SettingsNav, out.AuditNav)
	}
	for _, r := range out.GuestAudit {
		t.Errorf("the guest's deep link to the audit log asked for %s; want the not-allowed page and no request", r)
	}
	for _, r := range out.GuestRequests {
		if strings.Contains(r, "/keys") || strings.Contains(r, "/credentials") || strings.Contains(r, "/invitations") {
			t.Errorf("the guest's page asked for %s, which a guest may not manage", r)
		}
	}
}

const settingsScript = `
const cat = (lang, area) => JSON.parse(readFileSync(cfg.locales + '/' + lang + '/' + area + '.json', 'utf8'))
const s = cat('en', 'settings')
const approvals = cat('en', 'approvals')
const main = page.getByRole('main')
const region = (name) => main.getByRole('region', { name, exact: true })
const status = (text) => main.getByRole('status').filter({ hasText: text }).waitFor()
const fill = (t, v) => t.replace(/\{\{\w+\}\}/, v)
// shownAnywhere lists where the page shows text v: its text, any field's
// value, any attribute.
const shownAnywhere = (v) => page.evaluate((v) => {
  const out = []
  if (document.body.innerText.includes(v)) out.push('text')
  for (const el of document.querySelectorAll('input,textarea')) if (el.value.includes(v)) out.push('field ' + (el.getAttribute('aria-label') || el.id))
  if (document.documentElement.outerHTML.includes(v)) out.push('markup')
  return out
}, v)
await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url })

await signIn()
await page.goto(url + '/settings')
await page.getByRole('heading', { level: 1, name: s.title }).waitFor()

// Rename the workspace; the top bar's picker follows.
step('rename the workspace')
const wsRegion = region(s.workspace.title)
await wsRegion.getByRole('textbox', { name: s.workspace.name }).fill('lab')
await wsRegion.getByRole('button', { name: s.workspace.rename }).click()
await status(fill(s.workspace.renamed, 'lab'))
await page.getByRole('banner').getByRole('combobox').first().locator('option', { hasText: 'lab' }).waitFor({ state: 'attached' })

// Save a provider key: the field is a password field, cleared after.
step('save a provider key')
const creds = region(s.credentials.title)
await creds.getByRole('combobox', { name: s.credentials.provider }).selectOption('anthropic')
const keyField = creds.getByLabel(s.credentials.apiKey, { exact: true })
if ((await keyField.getAttribute('type')) !== 'password') throw new Error('the API key field is not a password field')
await keyField.fill(args.secret)
await creds.getByRole('button', { name: s.credentials.save }).click()
await status(fill(s.credentials.savedFor, 'anthropic'))
if ((await keyField.inputValue()) !== '') throw new Error('the API key field still holds the key after saving')
const credRow = creds.getByRole('table', { name: s.credentials.caption }).getByRole('row').filter({ hasText: 'anthropic' })
await credRow.filter({ hasText: s.credentials.saved }).waitFor()
const secretShown = (await shownAnywhere(args.secret)).map((w) => 'after saving: ' + w)
await page.reload()
await credRow.waitFor()
secretShown.push(...(await shownAnywhere(args.secret)).map((w) => 'after a reload: ' + w))

// Make an API key: shown once, copied, it works.
step('create an API key')
const keysRegion = region(s.keys.title)
await keysRegion.getByRole('textbox', { name: s.keys.name }).fill('ci')
await keysRegion.getByRole('button', { name: s.keys.create }).click()
const made = keysRegion.getByRole('region', { name: fill(s.keys.madeTitle, 'ci') })
await made.getByText(s.keys.shownOnce).waitFor()
const apiKey = await made.getByRole('textbox', { name: s.keys.secret }).inputValue()
const axeSerious = seriousOf(await axe()).map((v) => 'with the new key shown: ' + v.id + ' at ' + v.targets.join('; '))
await made.getByRole('button', { name: s.copy }).click()
await made.getByRole('status').filter({ hasText: s.copied }).waitFor()
const clipboard = await page.evaluate(() => navigator.clipboard.readText())
const call = async () => (await fetch(url + '/api/agents', { headers: { Authorization: 'Bearer ' + apiKey } })).status
const keyBefore = await call()
await made.getByRole('button', { name: s.done }).click()
await made.waitFor({ state: 'detached' })
const keyShown = (await shownAnywhere(apiKey)).map((w) => 'after Done: ' + w)
await page.reload()
const keyRow = keysRegion.getByRole('table', { name: s.keys.caption }).getByRole('row').filter({ has: page.getByRole('cell', { name: 'ci', exact: true }) })
await keyRow.waitFor()
keyShown.push(...(await shownAnywhere(apiKey)).map((w) => 'after a reload: ' + w))

// Revoke it, after the confirmation.
step('revoke the API key')
await keyRow.getByRole('button', { name: s.keys.revoke }).click()
const ask = keyRow.getByRole('group', { name: fill(s.keys.confirmRevoke, 'ci') })
await ask.waitFor()
axeSerious.push(...seriousOf(await axe()).map((v) => 'asking to revoke: ' + v.id + ' at ' + v.targets.join('; ')))
await ask.getByRole('button', { name: s.keys.revoke }).click()
await status(fill(s.keys.revokedDone, 'ci'))
await keyRow.filter({ hasText: s.keys.revokedAt.replace(' {{date}}', '').replace('{{date}} ', '') }).waitFor()
const keyAfter = await call()

// Invite carol as an admin, and someone with the link as a guest, whose
// invitation is then revoked.
step('invite')
const people = region(s.members.title)
await people.getByRole('textbox', { name: s.invitations.email }).fill(args.carol)
await people.getByRole('combobox', { name: s.invitations.role, exact: true }).selectOption('admin')
await people.getByRole('button', { name: s.invitations.invite }).click()
const linkBox = people.getByRole('region', { name: s.invitations.madeTitle })
const invitationLink = await linkBox.getByRole('textbox', { name: s.invitations.link }).inputValue()
await linkBox.getByRole('button', { name: s.done }).click()
const invTable = people.getByRole('table', { name: s.invitations.caption })
await invTable.getByRole('row').filter({ hasText: args.carol }).filter({ hasText: s.invitations.states.pending }).waitFor()
await people.getByRole('combobox', { name: s.invitations.role, exact: true }).selectOption('guest')
await people.getByRole('button', { name: s.invitations.invite }).click()
await linkBox.waitFor()
await linkBox.getByRole('button', { name: s.done }).click()
const anyoneRow = invTable.getByRole('row').filter({ hasText: s.invitations.anyone })
await anyoneRow.getByRole('button', { name: s.invitations.revoke }).click()
await anyoneRow.getByRole('group').getByRole('button', { name: s.invitations.revoke }).click()
await anyoneRow.waitFor({ state: 'detached' })

// Make bob an admin; remove dan. The last owner cannot step down: the
// server's refusal shows, and the role stays.
step('change a role, remove a member')
const members = people.getByRole('table', { name: s.members.caption })
const ownRole = members.getByRole('combobox', { name: fill(s.members.roleOf, cfg.email) })
const consoleBefore = consoleErrors.length
await ownRole.selectOption('admin')
const lastOwnerError = await people.getByRole('alert').innerText()
// The browser logs the refusal it was meant to get (409); only that one
// is forgiven.
for (let i = consoleErrors.length - 1; i >= consoleBefore; i--) if (/status of 409/.test(consoleErrors[i])) consoleErrors.splice(i, 1)
if ((await ownRole.inputValue()) !== 'owner') throw new Error('the refused role change left the select at ' + (await ownRole.inputValue()))
await members.getByRole('combobox', { name: fill(s.members.roleOf, args.bob) }).selectOption('admin')
await status(s.members.roleSet.replace('{{name}}', args.bob).replace('{{role}}', s.role.admin))
const danRow = members.getByRole('row').filter({ hasText: args.dan })
await danRow.getByRole('button', { name: s.members.remove }).click()
await danRow.getByRole('group', { name: fill(s.members.confirmRemove, args.dan) }).getByRole('button', { name: s.members.remove }).click()
await status(fill(s.members.removed, args.dan))
await danRow.waitFor({ state: 'detached' })

// The approvals inbox, with nothing pending, says so and offers no decision.
step('approvals')
const tasksCat = cat('en', 'tasks')
await page.getByRole('navigation', { name: 'Pages', exact: true }).getByRole('link', { name: approvals.nav }).click()
await page.getByRole('heading', { level: 1, name: approvals.title }).waitFor()
await main.getByText(approvals.empty).waitFor()
if ((await main.getByRole('list', { name: approvals.listLabel }).count()) + (await main.getByRole('button', { name: tasksCat.decide.approve }).count()) > 0) throw new Error('the approvals page shows requests or an Approve button with nothing pending')

// A guest signs in: the page shows notes instead of controls and asks
// only for what a guest may read.
step('the guest')
await page.getByRole('button', { name: 'Sign out' }).click()
await page.getByRole('heading', { name: 'Sign in to AgentCraft' }).waitFor()
await signIn(args.guestEmail, args.guestPassword)
const guestRequests = [], guestRefused = []
page.on('response', (r) => {
  const u = new URL(r.url())
  if (!u.pathname.startsWith('/api/')) return
  guestRequests.push(r.request().method() + ' ' + u.pathname)
  if (r.status() >= 400) guestRefused.push(r.status() + ' ' + r.request().method() + ' ' + u.pathname)
})
await page.goto(url + '/settings')
await page.getByRole('heading', { level: 1, name: s.title }).waitFor()
await main.getByRole('table', { name: s.members.caption }).getByRole('row').filter({ hasText: args.guestEmail }).waitFor()
await page.waitForLoadState('networkidle')
const guestControls = []
for (const role of ['button', 'textbox', 'combobox']) {
  for (const el of await main.getByRole(role).all()) guestControls.push(role + ' ' + ((await el.getAttribute('aria-label')) || (await el.innerText()).trim()))
}
let guestNotes = 0
for (const n of [s.workspace.adminOnly, s.credentials.adminOnly, s.keys.adminOnly, s.members.adminOnly]) guestNotes += await main.getByText(n, { exact: true }).count()
await shot('settings-guest')
// The nav leaves out what a guest may not use (the audit log is for
// admins), and a deep link there says so instead of asking the server.
const guestNav = []
for (const l of await page.getByRole('navigation', { name: 'Pages', exact: true }).getByRole('link').all()) guestNav.push((await l.innerText()).trim())
await page.goto(url + '/audit')
await page.getByRole('heading', { level: 1, name: cat('en', 'error').notAllowed }).waitFor()
await page.waitForLoadState('networkidle')
const guestAudit = guestRequests.filter((r) => r.includes('/api/audit-logs'))
result = { guest_nav: guestNav, guest_audit: guestAudit, audit_nav: cat('en', 'audit').nav, settings_nav: s.nav, axe_serious: axeSerious, last_owner_error: lastOwnerError, api_key: apiKey, clipboard, key_before: keyBefore, key_after: keyAfter, invitation_link: invitationLink,
  secret_shown: secretShown, key_shown: keyShown, guest_controls: guestControls, guest_requests: guestRequests, guest_refused: guestRefused, guest_notes: guestNotes }
`

// ownerID is the id of the owner the browser tests sign in as.
func ownerID(t *testing.T, env *studioEnv) string {
	t.Helper()
	u, err := env.Identity.UserByEmail(t.Context(), ownerEmail)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}
