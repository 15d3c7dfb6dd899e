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
