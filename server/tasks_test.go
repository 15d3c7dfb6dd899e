package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// seedApproval makes a task of ws waiting on an approval of capability c.
func (w *matrixWorld) seedApproval(ws store.Workspace, c store.Capability) (store.Task, store.Approval) {
	t := w.t
	tk, err := w.env.Store.Tasks().Create(t.Context(), store.Task{WorkspaceID: ws.ID, Title: "do " + string(c), Source: "api",
		Status: store.TaskAwaitingApproval, Capability: c, CreatedBy: "system:test"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.env.Store.Approvals().Create(t.Context(), store.Approval{WorkspaceID: ws.ID, TaskID: tk.ID, StepKey: "s",
		Capability: c, Summary: "a " + string(c) + " action", RequestedBy: "system:test"})
	if err != nil {
		t.Fatal(err)
	}
	return tk, a
}

// TestApprovalPermissions: who may decide an approval follows its
// capability — low from member, medium from admin, high from owner; a
// guest decides nothing; another workspace's approvals are invisible.
func TestApprovalPermissions(t *testing.T) {
	w := newMatrixWorld(t)
	type want struct {
		status int
		code   string
	}
	ok := want{http.StatusOK, ""}
	denied := want{http.StatusForbidden, "permission_denied"}
	notAllowed := want{http.StatusForbidden, "approval_not_allowed"}
	table := map[identity.Role]map[store.Capability]want{
		identity.RoleGuest:  {store.CapabilityLow: denied, store.CapabilityMedium: denied, store.CapabilityHigh: denied},
		identity.RoleMember: {store.CapabilityLow: ok, store.CapabilityMedium: notAllowed, store.CapabilityHigh: notAllowed},
		identity.RoleAdmin:  {store.CapabilityLow: ok, store.CapabilityMedium: ok, store.CapabilityHigh: notAllowed},
		identity.RoleOwner:  {store.CapabilityLow: ok, store.CapabilityMedium: ok, store.CapabilityHigh: ok},
	}
	for role, byCap := range table {
		key, _ := w.key(w.a, role, "", "")
		c := servertest.Client{T: t, Base: w.url, Key: key}
		for capability, wnt := range byCap {
			for _, verb := range []string{"approve", "reject"} {
				tk, ap := w.seedApproval(w.a, capability)
				resp, body := c.Do("POST", "/api/tasks/"+tk.ID+"/"+verb, `{"comment":"ok"}`)
				var e struct {
					Error struct{ Code string } `json:"error"`
				}
				_ = json.Unmarshal(body, &e)
				if resp.StatusCode != wnt.status || e.Error.Code != wnt.code {
					t.Errorf("%s %s %s: %d %s, want %d %s", role, verb, capability, resp.StatusCode, body, wnt.status, wnt.code)
				}
				got, _ := w.env.Store.Approvals().Get(t.Context(), w.a.ID, ap.ID)
				decided := got.Status != store.ApprovalPending
				if decided != (wnt.status == http.StatusOK) {
					t.Errorf("%s %s %s: approval %s after %d", role, verb, capability, got.Status, resp.StatusCode)
				}
			}
		}
	}

	// B's approvals: not listed, not readable, not decidable from A.
	tkB, apB := w.seedApproval(w.b, store.CapabilityLow)
	ownerA, _ := w.key(w.a, identity.RoleOwner, "", "")
	c := servertest.Client{T: t, Base: w.url, Key: ownerA}
	var list struct {
		Data []store.Approval `json:"data"`
	}
	c.JSON("GET", "/api/approvals?status=pending", "", http.StatusOK, &list)
	for _, a := range list.Data {
		if a.WorkspaceID != w.a.ID || a.ID == apB.ID {
			t.Errorf("A's inbox lists %+v", a)
		}
	}
	for _, call := range []struct{ method, path, body string }{
		{"GET", "/api/tasks/" + tkB.ID, ""},
		{"GET", "/api/tasks/" + tkB.ID + "/evidence", ""},
		{"POST", "/api/tasks/" + tkB.ID + "/approve", "{}"},
		{"POST", "/api/tasks/" + tkB.ID + "/reject", fmt.Sprintf(`{"approval_id":%q}`, apB.ID)},
		{"POST", "/api/tasks/" + tkB.ID + "/compensate", "{}"},
	} {
		if resp, body := c.Do(call.method, call.path, call.body); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s from A = %d %s, want 404", call.method, call.path, resp.StatusCode, body)
		}
	}
	if got, _ := w.env.Store.Approvals().Get(t.Context(), w.b.ID, apB.ID); got.Status != store.ApprovalPending {
		t.Errorf("B's approval %s after A's calls", got.Status)
	}
}

// TestWorkerAPI drives an external executor over HTTP: claim, a step
// before and after its effect, a medium step refused until approved,
// heartbeat, complete.
func TestWorkerAPI(t *testing.T) {
	w := newMatrixWorld(t)
	member, _ := w.key(w.a, identity.RoleMember, "", "")
	ownerKey, _ := w.key(w.a, identity.RoleOwner, "", "")
	exec := servertest.Client{T: t, Base: w.url, Key: member}
	var out struct {
		Task  store.Task `json:"task"`
		RunID string     `json:"run_id"`
	}
	exec.JSON("POST", "/api/agents/run", `{"intent":{"action":"search","target":"room rules"}}`, http.StatusBadRequest, nil)
	exec.JSON("POST", "/api/agents/run", `{"intent":{"action":"search","target":"room rules"},"idempotency_key":"k-1","executor":"claude-code"}`, http.StatusCreated, &out)
	var again struct {
		Duplicate bool `json:"duplicate"`
	}
	exec.JSON("POST", "/api/agents/run", `{"intent":{"action":"search","target":"room rules"},"idempotency_key":"k-1","executor":"claude-code"}`, http.StatusOK, &again)
	if !again.Duplicate {
		t.Errorf("the same idempotency key again: not a duplicate")
	}
	if resp, _ := exec.Do("POST", "/api/runs/claim", `{"executor":"codex"}`); resp.StatusCode != http.StatusNoContent {
		t.Errorf("claim with no work = %d, want 204", resp.StatusCode)
	}
	var claimed struct {
		Run  store.Run  `json:"run"`
		Task store.Task `json:"task"`
	}
	exec.JSON("POST", "/api/runs/claim", `{"executor":"claude-code","lease_sec":30}`, http.StatusOK, &claimed)
	if claimed.Run.ID != out.RunID || claimed.Task.ID != out.Task.ID {
		t.Fatalf("claimed %+v, want run %s", claimed, out.RunID)
	}
	base := "/api/runs/" + out.RunID
	var st store.TaskStep
	exec.JSON("POST", base+"/step", `{"executor":"claude-code","key":"search","tool":"kb_search","input":{"q":"rooms"}}`, http.StatusOK, &st)
	exec.JSON("POST", base+"/step", `{"executor":"claude-code","key":"search","tool":"kb_search","output":{"hits":1}}`, http.StatusOK, &st)
	if st.Status != store.StepOK {
		t.Errorf("step %+v, want ok", st)
	}
	resp, body := exec.Do("POST", base+"/step", `{"executor":"claude-code","key":"book","tool":"book_room","capability":"medium","summary":"book room 3"}`)
	var e struct {
		Error struct{ Code, Param string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != http.StatusConflict || e.Error.Code != "approval_pending" || e.Error.Param == "" {
		t.Fatalf("medium step = %d %s, want 409 approval_pending naming the approval", resp.StatusCode, body)
	}
	admin := servertest.Client{T: t, Base: w.url, Key: ownerKey}
	admin.JSON("POST", "/api/tasks/"+out.Task.ID+"/approve", fmt.Sprintf(`{"approval_id":%q}`, e.Error.Param), http.StatusOK, nil)
	exec.JSON("POST", base+"/step", `{"executor":"claude-code","key":"book","tool":"book_room","capability":"medium","output":{"booking":"b1"},"undo":{"booking":"b1"}}`, http.StatusOK, &st)
	if st.Status != store.StepOK {
		t.Errorf("approved step %+v", st)
	}
	exec.JSON("POST", base+"/heartbeat", `{"executor":"claude-code","lease_sec":30}`, http.StatusOK, nil)
	if resp, _ := exec.Do("POST", base+"/complete", `{"executor":"codex","result":"x"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("complete by another executor = %d, want 404", resp.StatusCode)
	}
	exec.JSON("POST", base+"/complete", `{"executor":"claude-code","result":"Booked room 3."}`, http.StatusOK, nil)
	var ev struct {
		Steps []store.TaskStep `json:"steps"`
	}
	exec.JSON("GET", "/api/tasks/"+out.Task.ID+"/evidence", "", http.StatusOK, &ev)
	if len(ev.Steps) != 2 {
		t.Errorf("evidence %+v, want 2 steps", ev.Steps)
	}
	var tk struct {
		Task store.Task `json:"task"`
	}
	exec.JSON("GET", "/api/tasks/"+out.Task.ID, "", http.StatusOK, &tk)
	if tk.Task.Status != store.TaskDone {
		t.Errorf("task %s, want done", tk.Task.Status)
	}
	if resp, body := exec.Do("POST", base+"/fail", `{"executor":"claude-code","error":"late"}`); resp.StatusCode != http.StatusConflict {
		t.Errorf("fail after complete = %d %s, want 409 lease_lost", resp.StatusCode, body)
	}
}
