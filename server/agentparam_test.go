package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAgentErrorsNameTheirField: a refused agent body answers with the
// field it is about as error.param, so that the studio's form shows the
// message beside that field, for the errors the checks find before the
// store (model, max_steps, a middleware layer) and those from the
// platform and store (a taken name, an unknown provider or tool).
func TestAgentErrorsNameTheirField(t *testing.T) {
	t.Parallel()
	_, _, c := newEnv(t, helper)
	c.json("POST", "/api/agents", `{"name":"writer","model":"fake/fake-model"}`, http.StatusCreated, nil)
	for _, tc := range []struct {
		name, body string
		status     int
		param      string
		says       string
	}{
		{"no name", `{"name":" ","model":"fake/m"}`, 400, "name", "name is required"},
		{"no provider in the model", `{"name":"a","model":"gpt-4o"}`, 400, "model", "PROVIDER/MODEL"},
		{"unknown provider", `{"name":"a","model":"nope/m"}`, 400, "model", "nope"},
		{"negative max_steps", `{"name":"a","model":"fake/m","max_steps":-1}`, 400, "max_steps", "max_steps is -1"},
		{"temperature out of range", `{"name":"a","model":"fake/m","temperature":3}`, 400, "temperature", "temperature 3;"},
		{"negative rps", `{"name":"a","model":"fake/m","rate_limit":{"enabled":true,"rps":-2}}`, 400, "rate_limit", "rate_limit.rps"},
		{"bad pii mode", `{"name":"a","model":"fake/m","pii":{"mode":"shred"}}`, 400, "pii", "pii.mode"},
		{"negative retries", `{"name":"a","model":"fake/m","retry":{"max_retries":-1}}`, 400, "retry", "retry.max_retries"},
		{"unknown tool", `{"name":"a","model":"fake/m","tools":["no_such_tool"]}`, 400, "tools", "no_such_tool"},
		{"name taken", `{"name":"writer","model":"fake/m"}`, 409, "name", "already exists"},
		{"name of a file agent", `{"name":"helper","model":"fake/m"}`, 409, "name", "helper"},
	} {
		resp, body := c.do("POST", "/api/agents", tc.body)
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Param   *string `json:"param"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%s: answer %s: %v", tc.name, body, err)
		}
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if resp.StatusCode != tc.status || param != tc.param || !strings.Contains(e.Error.Message, tc.says) {
			t.Errorf("%s: POST /api/agents = %d param %q %q; want %d param %q saying %q", tc.name, resp.StatusCode, param, e.Error.Message, tc.status, tc.param, tc.says)
		}
	}
	// An update is checked the same way.
	var list struct{ Data []struct{ ID, Name string } }
	c.json("GET", "/api/agents", "", http.StatusOK, &list)
	id := ""
	for _, a := range list.Data {
		if a.Name == "writer" {
			id = a.ID
		}
	}
	resp, body := c.do("PUT", "/api/agents/"+id, `{"name":"writer","model":"nomodel"}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"param":"model"`) {
		t.Errorf("PUT with a model lacking its provider = %d %s; want 400 with param model", resp.StatusCode, body)
	}
}
