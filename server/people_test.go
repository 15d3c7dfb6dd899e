package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

// TestWorkspaceLifecycleOverTheAPI walks what the CLI can do, over HTTP:
// a signed-in user creates a workspace, invites a colleague who signs up
// by the link, changes their role, makes and revokes an API key with a
// role and scope, renames and deletes the workspace — and the audit log
// holds every step without an e-mail address.
func TestWorkspaceLifecycleOverTheAPI(t *testing.T) {
	pe := newPeopleEnv(t, nil)
	ann := newBrowser(t, pe.URL)
	ann.login("ann@example.com", annPassword)

	var ws struct{ ID, Name, Role string }
	resp, data := ann.write("POST", "/api/workspaces", `{"name":"research"}`)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &ws) != nil || ws.Role != "owner" {
		t.Fatalf("create workspace = %d %s", resp.StatusCode, data)
	}
	resp, data = ann.do("GET", "/api/workspaces", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"research"`) || !strings.Contains(string(data), `"default"`) {
		t.Fatalf("list workspaces = %d %s", resp.StatusCode, data)
	}

	// An invitation for bob, as a guest; bob signs up through it.
	var inv struct {
		Path, Token string
	}
	resp, data = ann.write("POST", "/api/workspaces/research/invitations", `{"role":"guest","email":"bob@example.com"}`)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &inv) != nil || !strings.HasPrefix(inv.Path, "/auth/invite/") {
		t.Fatalf("invite = %d %s", resp.StatusCode, data)
	}
	bob := newBrowser(t, pe.URL)
	if resp, data := bob.do("GET", inv.Path, "", nil); resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"research"`) || !strings.Contains(string(data), `"guest"`) {
		t.Fatalf("invitation info = %d %s", resp.StatusCode, data)
	}
	if resp, data := bob.do("POST", "/api/invitations/"+inv.Token+"/signup", `{"email":"eve@example.com","password":"a long enough password"}`, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("sign-up with another address = %d %s; want 403", resp.StatusCode, data)
	}
	resp, data = bob.do("POST", "/api/invitations/"+inv.Token+"/signup", `{"email":"bob@example.com","password":"a long enough password","display_name":"Bob"}`, nil)
	var in struct {
		CSRFToken string `json:"csrf_token"`
		User      struct{ ID string }
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &in) != nil || in.User.ID == "" {
		t.Fatalf("sign-up = %d %s", resp.StatusCode, data)
	}
	sessionCookie(t, resp)
	bob.csrf = in.CSRFToken
	if resp, _ := bob.do("POST", "/api/invitations/"+inv.Token+"/signup", `{"email":"bob@example.com","password":"a long enough password"}`, nil); resp.StatusCode != http.StatusGone {
		t.Errorf("invitation used twice = %d; want 410", resp.StatusCode)
	}

	// bob is a guest of research: he reads, and may not write.
	hdr := map[string]string{"X-Workspace": "research"}
	if resp, data := bob.do("GET", "/api/agents", "", hdr); resp.StatusCode != http.StatusOK {
		t.Errorf("guest reads agents = %d %s", resp.StatusCode, data)
	}
	resp, data = bob.do("POST", "/api/agents", `{"name":"x","model":"fake/m"}`, map[string]string{"X-Workspace": "research", "X-CSRF-Token": bob.csrf})
	if code, msg := errCode(t, data); resp.StatusCode != http.StatusForbidden || code != "permission_denied" || !strings.Contains(msg, "edit") {
		t.Errorf("guest creates an agent = %d %s; want 403 naming edit", resp.StatusCode, data)
	}
	// ann makes him a member; now he may.
	if resp, data := ann.write("PATCH", "/api/workspaces/research/members/"+in.User.ID, `{"role":"member"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("set role = %d %s", resp.StatusCode, data)
	}
	resp, data = bob.do("POST", "/api/agents", `{"name":"x","model":"fake/m"}`, map[string]string{"X-Workspace": "research", "X-CSRF-Token": bob.csrf})
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
		t.Errorf("member creates an agent = %d %s", resp.StatusCode, data)
	}
	resp, data = ann.do("GET", "/api/workspaces/research/members", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"member"`) || !strings.Contains(string(data), "bob@example.com") {
		t.Errorf("members = %d %s", resp.StatusCode, data)
	}

	// A chat-only key for research: it chats and reads, nothing else.
	var key struct {
		Key    string
		APIKey store.APIKey `json:"api_key"`
	}
	resp, data = ann.write("POST", "/api/workspaces/research/keys", `{"name":"bot","role":"member","scope":"chat"}`)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(data, &key) != nil || !strings.HasPrefix(key.Key, "ac_") ||
		key.APIKey.Role != store.RoleMember || key.APIKey.Scope != "chat" || key.APIKey.UserID != pe.ann.ID {
		t.Fatalf("create key = %d %s", resp.StatusCode, data)
	}
	bot := servertest.Client{T: t, Base: pe.URL, Key: key.Key}
	if resp, data := bot.Do("GET", "/api/agents", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("chat key reads research's agents = %d %s", resp.StatusCode, data)
	}
	if resp, data := bot.Do("DELETE", "/api/agents/x", ""); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(data), "scope") {
		t.Errorf("chat key deletes an agent = %d %s; want 403 naming the scope", resp.StatusCode, data)
	}
	if resp, data := ann.write("DELETE", "/api/workspaces/research/keys/"+key.APIKey.ID, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke key = %d %s", resp.StatusCode, data)
	}
	// Revocation is seen at once by this process: the key was checked
	// (and cached) above, and revoking it through the API drops it from
	// the cache of checked keys, KeyTTL notwithstanding.
	if resp, data := bot.Do("GET", "/api/providers", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("revoked key = %d %s; want 401", resp.StatusCode, data)
	}

	// Rename (admin), then delete (owner only: bob, a member, may not).
	if resp, data := ann.write("PATCH", "/api/workspaces/research", `{"name":"lab"}`); resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"lab"`) {
		t.Fatalf("rename = %d %s", resp.StatusCode, data)
	}
	resp, data = bob.write("DELETE", "/api/workspaces/lab", "")
	if code, msg := errCode(t, data); resp.StatusCode != http.StatusForbidden || code != "permission_denied" || !strings.Contains(msg, "delete_workspace") {
		t.Errorf("member deletes the workspace = %d %s; want 403 naming delete_workspace", resp.StatusCode, data)
	}
	if resp, data := ann.write("DELETE", "/api/workspaces/lab", ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete = %d %s", resp.StatusCode, data)
	}
	if _, err := pe.Store.Workspaces().Get(t.Context(), ws.ID); err == nil {
		t.Error("the workspace is still there")
	}
	if resp, data := ann.write("DELETE", "/api/workspaces/default", ""); resp.StatusCode != http.StatusConflict {
		t.Errorf("delete the default workspace = %d %s; want 409", resp.StatusCode, data)
	}

	// Every step is audited (the log is written in the background), and
	// the audit log holds no e-mail address.
	want := []string{"workspace.create", "invitation.create", "invitation.accept", "member.role", "apikey.create", "apikey.revoke", "workspace.rename", "workspace.delete"}
	seen := map[string]bool{}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		evs, err := pe.Store.AuditLog().List(t.Context(), store.AuditFilter{WorkspaceID: ws.ID, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Events {
			seen[e.Action] = true
			if b, _ := json.Marshal(e); strings.Contains(string(b), "@example.com") {
				t.Fatalf("audit event %s holds an e-mail address: %s", e.Action, b)
			}
		}
		missing := slices.DeleteFunc(slices.Clone(want), func(a string) bool { return seen[a] })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log lacks %v (has %v)", missing, seen)
		}
	}
}
