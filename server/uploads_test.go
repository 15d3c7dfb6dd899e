package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/imagegentest"
)

// TestGetUpload: GET /api/uploads/{id} serves an upload's bytes to its
// workspace only; pictures inline, anything else as an attachment that
// cannot run as the server's origin.
func TestGetUpload(t *testing.T) {
	t.Parallel()
	env, _, c := newKnowledgeEnv(t)
	pic := string(imagegentest.PNG(3))
	body, ct := multipartBody(t, file{"fox.png", "image/png", pic}, file{"page.html", "text/html", "<script>alert(1)</script>"})
	resp, out := c.send("POST", "/api/upload", ct, body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload = %d %s", resp.StatusCode, out)
	}
	var ups struct {
		Files []struct {
			FileID string `json:"fileId"`
		}
	}
	if err := json.Unmarshal(out, &ups); err != nil || len(ups.Files) != 2 {
		t.Fatalf("upload answer %s", out)
	}
	png, html := ups.Files[0].FileID, ups.Files[1].FileID

	resp, got := c.do("GET", "/api/uploads/"+png, "")
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, []byte(pic)) {
		t.Fatalf("GET png = %d, %d bytes; want the %d uploaded", resp.StatusCode, len(got), len(pic))
	}
	for k, want := range map[string]string{"Content-Type": "image/png", "Content-Disposition": `inline; filename=fox.png`,
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'; sandbox"} {
		if v := resp.Header.Get(k); v != want {
			t.Errorf("png %s = %q, want %q", k, v, want)
		}
	}
	resp, got = c.do("GET", "/api/uploads/"+html, "")
	if resp.StatusCode != http.StatusOK || string(got) != "<script>alert(1)</script>" ||
		resp.Header.Get("Content-Type") != "application/octet-stream" || resp.Header.Get("Content-Disposition") != "attachment; filename=page.html" {
		t.Errorf("GET html = %d %s %q %q; want an octet-stream attachment", resp.StatusCode, got, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
	}

	resp, got = c.do("GET", "/api/uploads/nope", "")
	wantError(t, resp, got, http.StatusNotFound, "not_found")
	other, err := env.Store.Workspaces().Create(t.Context(), store.Workspace{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	oc := client{t: t, base: env.URL, key: servertest.CreateKey(t, env.Store, other.ID)}
	resp, got = oc.do("GET", "/api/uploads/"+png, "")
	wantError(t, resp, got, http.StatusNotFound, "not_found")
}
