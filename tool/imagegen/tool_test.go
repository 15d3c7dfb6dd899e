package imagegen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/tool"
	"github.com/agentcraftlab/agentcraft/tool/imagegen"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/comfytest"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/imagegentest"
)

// backendFunc is an imagegen.Backend of a function.
type backendFunc func(context.Context, imagegen.Request) ([]imagegen.Image, error)

func (f backendFunc) Generate(ctx context.Context, r imagegen.Request) ([]imagegen.Image, error) {
	return f(ctx, r)
}

func TestGeneratorStoresUploads(t *testing.T) {
	srv := comfytest.New(t, nil)
	ups := &memUploads{}
	gen, err := imagegen.New(newComfy(t, srv, comfytest.Workflow, imagegen.ComfyUIOptions{}), ups, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gen.Generate(t.Context(), "ws1", imagegen.Request{Prompt: "  two boats  ", N: 2, Seed: ptr(int64(9))})
	if err != nil {
		t.Fatal(err)
	}
	want := imagegen.Result{Prompt: "two boats", Images: []imagegen.Stored{
		{UploadID: "up1", MIME: "image/png", URL: "/api/uploads/up1", Seed: ptr(int64(9))},
		{UploadID: "up2", MIME: "image/png", URL: "/api/uploads/up2", Seed: ptr(int64(9))},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	made := srv.Images()
	for i, s := range res.Images {
		f, ok := ups.get(s.UploadID)
		if !ok || f.Workspace != "ws1" || f.MIME != "image/png" || !bytes.Equal(f.Data, made[i]) || f.Name != "image-"+string(rune('1'+i))+".png" {
			t.Errorf("upload %s = %+v, want ComfyUI's image %d in ws1", s.UploadID, f.Name, i)
		}
	}
}

func TestGeneratorRefuses(t *testing.T) {
	none := backendFunc(func(context.Context, imagegen.Request) ([]imagegen.Image, error) { return nil, nil })
	gen, err := imagegen.New(none, &memUploads{}, &imagegen.Options{UploadURL: func(id string) string { return "https://x/" + id }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(t.Context(), "ws", imagegen.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "answered no images") {
		t.Errorf("no images: %v", err)
	}
	if _, err := gen.Generate(t.Context(), "", imagegen.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "no workspace") {
		t.Errorf("no workspace: %v", err)
	}
	if _, err := imagegen.New(nil, &memUploads{}, nil); err == nil {
		t.Error("nil back end accepted")
	}
	one := backendFunc(func(context.Context, imagegen.Request) ([]imagegen.Image, error) {
		return []imagegen.Image{{Data: imagegentest.PNG(1), MIME: "image/png"}}, nil
	})
	gen, _ = imagegen.New(one, &memUploads{err: errors.New("disk full")}, nil)
	if _, err := gen.Generate(t.Context(), "ws", imagegen.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "store image 1: disk full") {
		t.Errorf("store failure: %v", err)
	}
}

func TestGenerateImageTool(t *testing.T) {
	fake := imagegentest.NewOpenAI(t, nil)
	ups := &memUploads{}
	gen, err := imagegen.New(newOpenAI(t, fake, ""), ups, nil)
	if err != nil {
		t.Fatal(err)
	}
	var reg tool.Registry
	if err := reg.Register(gen.Tool()); err != nil {
		t.Fatalf("register: %v", err)
	}
	unbound, _ := reg.Get(imagegen.ToolName)
	if unbound.Capability() != tool.CapabilityMedium {
		t.Errorf("capability %v, want medium", unbound.Capability())
	}
	if _, err := unbound.Call(t.Context(), json.RawMessage(`{"prompt":"x"}`)); err == nil {
		t.Error("the unbound tool ran: it must refuse, having no workspace")
	}
	bound := unbound.(tool.WorkspaceBound).ForWorkspace("ws7")
	if bound.Name() != imagegen.ToolName || string(bound.Schema()) != string(unbound.Schema()) {
		t.Error("the bound tool differs in name or schema")
	}

	res, err := bound.Call(t.Context(), json.RawMessage(`{"prompt":"a kite","size":"1024x1536"}`))
	if err != nil || res.IsError {
		t.Fatalf("call = %+v, %v", res, err)
	}
	var out imagegen.Result
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
		t.Fatal(err)
	}
	if out.Prompt != "a kite" || len(out.Images) != 1 || out.Images[0].URL != "/api/uploads/"+out.Images[0].UploadID {
		t.Fatalf("result %s", res.Content)
	}
	f, ok := ups.get(out.Images[0].UploadID)
	if !ok || f.Workspace != "ws7" || !bytes.Equal(f.Data, imagegentest.PNG(1)) {
		t.Errorf("stored %+v, want the picture in ws7", f.Workspace)
	}
	if r := fake.Requests(); len(r) != 1 || r[0].Size != "1024x1536" {
		t.Errorf("requests %+v", r)
	}

	// Undo deletes what the call stored.
	u := bound.(tool.Undoable)
	payload, err := u.UndoOf(nil, res)
	if err != nil || payload == nil {
		t.Fatalf("UndoOf = %s, %v", payload, err)
	}
	if err := u.Undo(t.Context(), payload); err != nil {
		t.Fatal(err)
	}
	if ups.count() != 0 {
		t.Errorf("%d uploads left after undo", ups.count())
	}
	if err := u.Undo(t.Context(), payload); err != nil {
		t.Errorf("undo again: %v (an upload already gone is undone)", err)
	}

	for _, tt := range []struct{ args, want string }{
		{`{"prompt":""}`, "prompt"},
		{`{"prompt":"x","colour":"red"}`, "colour"},
		{`{"prompt":"x","n":9}`, "n"},
		{`{"prompt":"x","negative_prompt":"blur"}`, "negative_prompt: the OpenAI images API has no negative prompt"},
		{`{"prompt":"x","size":"huge"}`, `size "huge" is not WIDTHxHEIGHT`},
	} {
		res, err := bound.Call(t.Context(), json.RawMessage(tt.args))
		if err != nil || !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("call %s = %+v, %v; want an error result naming %q", tt.args, res, err, tt.want)
		}
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests reached the API; bad arguments must not", n)
	}
}
