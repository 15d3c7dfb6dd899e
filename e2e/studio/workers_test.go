package studio

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestWorkersPage: an owner's Workers page lists the registry as
// `agentcraft workers` does — a live worker with its host, pid, version
// and the run it holds, and the owner of a lease that has no registry
// row as unregistered — and the runs held, each linking to its run with
// the node it is on and its lease; a member's nav has no Workers page.
func TestWorkersPage(t *testing.T) {
	env := newStudio(t, &servertest.Options{Workflows: true, Memory: true})
	ctx := t.Context()
	addMember(t, env)
	claimed := func(owner string) store.Run {
		t.Helper()
		r, err := env.Store.Runs().Create(ctx, store.Run{WorkspaceID: env.Workspace.ID, Definition: json.RawMessage(triggersFlow), Status: store.RunQueued})
		if err != nil {
			t.Fatal(err)
		}
		if r, err = env.Store.Runs().Claim(ctx, env.Workspace.ID, r.ID, owner, time.Minute, false); err != nil {
			t.Fatal(err)
		}
		return r
	}
	held, orphan := claimed("worker-1"), claimed("ghost")
	if _, err := env.Store.Workers().Beat(ctx, store.Worker{ID: "worker-1", Kind: "worker", Host: "h1", PID: 4242, Version: "v9.9.9",
		StartedAt: time.Now().Add(-time.Hour), Runs: []store.HeldRun{{WorkspaceID: env.Workspace.ID, RunID: held.ID, Node: "draft"}}}); err != nil {
		t.Fatal(err)
	}

	var out struct {
		Workers []string `json:"workers"`
		Leases  []string `json:"leases"`
		Link    string   `json:"link"`
		Member  []string `json:"memberNav"`
	}
	browseInto(t, env, workersScript, map[string]string{"email": memberEmail, "password": memberPassword, "held": held.ID}, &out)
	if len(out.Workers) != 2 {
		t.Fatalf("the page lists %q; want worker-1 and the lease owner ghost", out.Workers)
	}
	for _, want := range []string{"worker-1", "Live", "Worker", "h1 (pid 4242)", "v9.9.9", "1 run"} {
		if !strings.Contains(out.Workers[0], want) {
			t.Errorf("worker-1's row reads %q; want %q in it", out.Workers[0], want)
		}
	}
	if !strings.Contains(out.Workers[1], "ghost") || !strings.Contains(out.Workers[1], "Unregistered") {
		t.Errorf("the lease owner without a row reads %q; want ghost, Unregistered", out.Workers[1])
	}
	if len(out.Leases) != 2 || !strings.Contains(out.Leases[0], held.ID[:12]) || !strings.Contains(out.Leases[0], "draft") || !strings.Contains(out.Leases[1], orphan.ID[:12]) {
		t.Errorf("the runs held read %q; want worker-1's run on node draft, then ghost's", out.Leases)
	}
	if out.Link != "/runs/"+held.ID {
		t.Errorf("worker-1's run links to %q", out.Link)
	}
	for _, name := range out.Member {
		if name == "Workers" {
			t.Errorf("a member's nav links to Workers (%q)", out.Member)
		}
	}
	if len(out.Member) == 0 {
		t.Error("the member's nav is empty")
	}
}

const workersScript = `
const main = page.getByRole('main')
await signIn()
await page.getByRole('navigation', { name: 'Pages', exact: true }).getByRole('link', { name: 'Workers' }).click()
await page.getByRole('heading', { level: 1, name: 'Workers' }).waitFor()
const table = main.getByRole('table', { name: 'Processes that execute runs' })
await table.locator('tbody tr').nth(1).waitFor()
const workers = (await table.locator('tbody tr').allInnerTexts()).map((s) => s.replace(/\s+/g, ' '))
const leasesTable = main.getByRole('table', { name: 'Runs of this workspace each process holds a lease on' })
const leases = (await leasesTable.locator('tbody tr').allInnerTexts()).map((s) => s.replace(/\s+/g, ' '))
const link = await leasesTable.getByRole('link', { name: 'Open run ' + args.held }).getAttribute('href')
await shot('workers')
await page.getByRole('button', { name: 'Sign out' }).click()
await page.getByRole('heading', { name: 'Sign in to AgentCraft' }).waitFor()
await signIn(args.email, args.password)
const memberNav = await page.getByRole('navigation', { name: 'Pages', exact: true }).getByRole('link').allInnerTexts()
result = { workers, leases, link, memberNav }
`
