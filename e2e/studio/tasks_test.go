package studio

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// approvalSeed is a task waiting on one approval, with one step done.
type approvalSeed struct {
	title, source, summary, tool string
	capability                   store.Capability
}

// seededTask is what seedApprovalTask stored.
type seededTask struct {
	TaskID     string `json:"task_id"`
	ApprovalID string `json:"approval_id"`
}

// seedApprovalTask stores, as the task service would have left them, a
// task awaiting approval of s.capability, its pending approval (expiring
// in an hour) and one finished step of s.tool that recorded an undo; no
// model or tool is needed to get there.
func seedApprovalTask(t *testing.T, env *studioEnv, s approvalSeed) seededTask {
	t.Helper()
	ctx := t.Context()
	ws := env.Workspace.ID
	tk, err := env.Store.Tasks().Create(ctx, store.Task{WorkspaceID: ws, Title: s.title, Source: s.source, Status: store.TaskAwaitingApproval,
		Capability: s.capability, CreatedBy: "system:seed", Intent: json.RawMessage(`{"action":"create","object":"event"}`)})
	if err != nil {
		t.Fatal(err)
	}
	step, err := env.Store.Steps().Record(ctx, store.TaskStep{WorkspaceID: ws, TaskID: tk.ID, IdempotencyKey: "seed/" + tk.ID + "/1",
		Tool: s.tool, Capability: s.capability, Input: json.RawMessage(`{"title":"` + s.title + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.Steps().Finish(ctx, ws, step.ID, store.StepResult{Status: store.StepOK,
		Output: json.RawMessage(`{"event_id":"evt-1"}`), Undo: json.RawMessage(`{"event_id":"evt-1"}`)}); err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	a, err := env.Store.Approvals().Create(ctx, store.Approval{WorkspaceID: ws, TaskID: tk.ID, StepKey: "seed/" + s.tool,
		Capability: s.capability, Summary: s.summary, RequestedBy: "system:seed", ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	return seededTask{TaskID: tk.ID, ApprovalID: a.ID}
}

const (
	memberEmail    = "meg@example.com"
	memberPassword = "a member's long password"
)

// addMember makes memberEmail a member (role member) of env's workspace.
func addMember(t *testing.T, env *studioEnv) {
	t.Helper()
	ctx := t.Context()
	u, err := env.Identity.CreateUser(ctx, identity.NewUser{Email: memberEmail, Password: memberPassword})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Identity.AddMember(ctx, identity.CLI, env.Workspace.ID, u.ID, identity.RoleMember); err != nil {
		t.Fatal(err)
	}
}

// TestApprovalsAndTasks: a member who tries to approve a medium-capability
// request is refused with the reason; the owner approves a low one from
// the inbox, which then no longer lists it, and its task page shows the
// task running, the approval approved and the step's evidence; Compensate
// reports the step it could not undo and why; the task list filters by
// source. The store is checked after each decision.
func TestApprovalsAndTasks(t *testing.T) {
	// Memory: sign-in lands on the chat, which lists conversations.
	env := newStudio(t, &servertest.Options{Tasks: true, Memory: true})
	ctx := t.Context()
	addMember(t, env)
	low := seedApprovalTask(t, env, approvalSeed{title: "Book the meeting room", source: "line", capability: store.CapabilityLow,
		summary: "Book room 3 for Friday 10:00", tool: "calendar_create_event"})
	medium := seedApprovalTask(t, env, approvalSeed{title: "Send the newsletter", source: "web", capability: store.CapabilityMedium,
		summary: "Mail the June newsletter to 200 readers", tool: "send_mail"})

	res := env.browse(t, tasksScript, map[string]any{
		"low": low, "medium": medium, "lowSummary": "Book room 3 for Friday 10:00", "mediumSummary": "Mail the June newsletter to 200 readers",
		"lowTitle": "Book the meeting room", "mediumTitle": "Send the newsletter",
		"memberEmail": memberEmail, "memberPassword": memberPassword,
	})
	var out struct {
		Refusal      string   `json:"refusal"`
		Status       string   `json:"status"`
		Report       string   `json:"report"`
		LineTasks    []string `json:"line_tasks"`
		StepsTable   string   `json:"steps_table"`
		ApprovalText string   `json:"approval_text"`
	}
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	if !strings.Contains(out.Refusal, "Your role cannot decide an approval of this capability.") || !strings.Contains(out.Refusal, "approve_medium") {
		t.Errorf("the member's refused approval reads %q; want the studio's reason and the server's message naming approve_medium", out.Refusal)
	}
	if out.Status != "Running" {
		t.Errorf("after approval the task page shows status %q; want Running", out.Status)
	}
	if !strings.Contains(out.StepsTable, "calendar_create_event") || !strings.Contains(out.StepsTable, "Succeeded") {
		t.Errorf("the steps table reads %q; want the seeded step of calendar_create_event, succeeded", out.StepsTable)
	}
	if !strings.Contains(out.ApprovalText, "Approved") {
		t.Errorf("the task page's approval reads %q; want it approved", out.ApprovalText)
	}
	if !strings.Contains(out.Report, "Not undone") || !strings.Contains(out.Report, "calendar_create_event") || !strings.Contains(out.Report, "not available") {
		t.Errorf("the compensation report reads %q; want step 1 not undone because its tool is not available", out.Report)
	}
	if len(out.LineTasks) != 1 || out.LineTasks[0] != "Book the meeting room" {
		t.Errorf("filtered to LINE, the task list shows %q; want only the LINE task", out.LineTasks)
	}

	a, err := env.Store.Approvals().Get(ctx, env.Workspace.ID, low.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != store.ApprovalApproved || a.ApproverUserID == "" {
		t.Errorf("the low approval is %s by %q; want approved by the owner", a.Status, a.ApproverUserID)
	}
	m, err := env.Store.Approvals().Get(ctx, env.Workspace.ID, medium.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != store.ApprovalPending {
		t.Errorf("the medium approval the member was refused is %s; want still pending", m.Status)
	}
	tk, err := env.Store.Tasks().Get(ctx, env.Workspace.ID, low.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != store.TaskRunning {
		t.Errorf("the approved task is %s in the store; want running", tk.Status)
	}
}

const tasksScript = `
const cat = (lang, area) => JSON.parse(readFileSync(cfg.locales + '/' + lang + '/' + area + '.json', 'utf8'))
const tk = cat('en', 'tasks'), ap = cat('en', 'approvals')
const main = page.getByRole('main')
const nav = () => page.getByRole('navigation', { name: 'Pages', exact: true })
page.on('response', (r) => { if (r.status() >= 500) step('HTTP ' + r.status() + ' from ' + r.request().method() + ' ' + new URL(r.url()).pathname + new URL(r.url()).search) })
const request = (summary) => main.getByRole('list', { name: ap.listLabel }).getByRole('listitem').filter({ hasText: summary })

// A member may decide low approvals only: the medium one is refused, and
// the page says why.
step('the member tries the medium approval')
await signIn(args.memberEmail, args.memberPassword)
await nav().getByRole('link', { name: ap.nav }).click()
await page.getByRole('heading', { level: 1, name: ap.title }).waitFor()
expectStatus(403)
await request(args.mediumSummary).getByRole('button', { name: tk.decide.approve }).click()
const refusal = (await request(args.mediumSummary).getByRole('alert').innerText()).trim()
step('refused: ' + refusal.replace(/\s+/g, ' '))
await shot('approvals-refused')
await page.getByRole('button', { name: 'Sign out' }).click()
await page.getByRole('heading', { name: 'Sign in to AgentCraft' }).waitFor()

// The owner approves the low one from the inbox, with a comment.
step('the owner approves the low approval')
await signIn()
await nav().getByRole('link', { name: ap.nav }).click()
await page.getByRole('heading', { level: 1, name: ap.title }).waitFor()
const row = request(args.lowSummary)
await row.getByRole('link', { name: args.lowTitle }).waitFor()
await row.getByRole('textbox', { name: tk.decide.comment }).fill('Room 3 is free')
await row.getByRole('button', { name: tk.decide.approve }).click()
await row.waitFor({ state: 'detached' })
await main.getByRole('status').filter({ hasText: ap.approved.replace('{{summary}}', args.lowSummary) }).waitFor()
await request(args.mediumSummary).waitFor()
step('the approved request left the pending list; the medium one stays')
// The decided one is listed under Approved.
await main.getByRole('combobox', { name: ap.filterStatus }).selectOption('approved')
await request(args.lowSummary).waitFor()
step('listed under ' + tk.approvalStatus.approved)

// Its task page: running now, the approval approved, the step's evidence.
await request(args.lowSummary).getByRole('link', { name: args.lowTitle }).click()
await page.getByRole('heading', { level: 1, name: args.lowTitle }).waitFor()
const status = (await main.getByText(tk.status.running, { exact: true }).innerText()).trim()
const approvalsRegion = main.getByRole('region', { name: tk.approvals, exact: true })
const approvalText = (await approvalsRegion.getByRole('listitem').filter({ hasText: args.lowSummary }).innerText()).trim()
if (await approvalsRegion.getByRole('button', { name: tk.decide.approve }).count()) throw new Error('the decided approval still offers Approve')
const steps = main.getByRole('table', { name: tk.stepsCaption })
const stepRow = steps.getByRole('row').filter({ hasText: 'calendar_create_event' })
await stepRow.getByText(tk.output, { exact: true }).click()
await stepRow.getByText('evt-1').first().waitFor()
const stepsTable = (await steps.innerText()).replace(/\s+/g, ' ')
step('task page: ' + status + '; steps: ' + stepsTable)
await shot('task-light-en')

// Compensate, after confirming: the report names what was not undone.
step('compensate')
await main.getByRole('button', { name: tk.compensate.button }).click()
const dialog = page.getByRole('dialog', { name: tk.compensate.confirmTitle })
await dialog.getByRole('button', { name: tk.compensate.confirm }).click()
await dialog.waitFor({ state: 'hidden' })
const reportRegion = main.getByRole('region', { name: tk.compensate.report })
await reportRegion.waitFor()
const report = (await reportRegion.innerText()).replace(/\s+/g, ' ')
step('report: ' + report)

// The task list, filtered to LINE, shows the LINE task only.
step('the task list')
await nav().getByRole('link', { name: tk.nav }).click()
await page.getByRole('heading', { level: 1, name: tk.title }).waitFor()
const table = main.getByRole('table', { name: tk.tableCaption })
await table.getByRole('link', { name: args.mediumTitle }).waitFor()
await main.getByRole('combobox', { name: tk.filterSource }).selectOption('line')
await table.getByRole('link', { name: args.mediumTitle }).waitFor({ state: 'detached' })
const lineTasks = (await table.getByRole('link').allInnerTexts()).map((s) => s.trim())
// A task asked in words, on a server without a task model: refused, and
// the page says what is missing.
step('a new task in words')
expectStatus(422)
const newTask = main.getByRole('region', { name: tk.new.title })
await newTask.getByRole('textbox', { name: tk.new.text }).fill('Add a team meeting tomorrow at 10')
await newTask.getByRole('button', { name: tk.new.submit }).click()
const noModel = (await newTask.getByRole('alert').innerText()).trim()
if (!noModel.includes(tk.new.noModel)) throw new Error('a new task without a model shows ' + noModel)
const serious = seriousOf(await axe())
if (serious.length) throw new Error('axe on the task list: ' + JSON.stringify(serious))
result = { refusal, status, approval_text: approvalText, steps_table: stepsTable, report, line_tasks: lineTasks }
`
