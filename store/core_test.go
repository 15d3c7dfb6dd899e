package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/store"
)

// recorder is a store.Driver that records the verbs Core calls. It embeds a
// nil Driver, so a verb the test did not expect panics.
type recorder struct {
	store.Driver
	calls []string
	run   store.Run
}

func (*recorder) Name() string { return "fake" }

func (r *recorder) RunGet(_ context.Context, _, _ string) (store.Run, error) {
	r.calls = append(r.calls, "RunGet")
	return r.run, nil
}

func (r *recorder) RunTransition(_ context.Context, p *store.RunTransitionParams) (store.Run, error) {
	r.calls = append(r.calls, "RunTransition")
	if p.To.Final() && p.Finished == nil || !p.To.Final() && p.Finished != nil {
		return store.Run{}, errors.New("finished_at does not follow the final status")
	}
	if p.Release != (p.To != store.RunRunning) {
		return store.Run{}, errors.New("lease release does not follow the status")
	}
	return store.Run{}, store.ErrNotFound // the run is not in a from status
}

func (r *recorder) RunEventInsert(_ context.Context, p *store.RunEventInsertParams) error {
	r.calls = append(r.calls, "RunEventInsert")
	return nil
}

// TestCoreRunStateMachine holds the run state machine to one place: Core
// refuses bad arguments before a driver runs any SQL, and explains a
// conditional update that matched nothing with the stored run.
func TestCoreRunStateMachine(t *testing.T) {
	ctx := context.Background()
	d := &recorder{run: store.Run{ID: "r1", Status: store.RunSucceeded}}
	runs := store.NewCore(d).Runs()

	if _, err := runs.Transition(ctx, "ws", "r1", nil, store.RunFailed, store.RunUpdate{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Transition with no from status = %v, want ErrInvalid", err)
	}
	if _, err := runs.Transition(ctx, "ws", "r1", []store.RunStatus{"lost"}, store.RunFailed, store.RunUpdate{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Transition from an unknown status = %v, want ErrInvalid", err)
	}
	if _, err := runs.Transition(ctx, "ws", "r1", []store.RunStatus{store.RunRunning}, store.RunFailed,
		store.RunUpdate{Output: json.RawMessage(`{`)}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Transition with output that is not JSON = %v, want ErrInvalid", err)
	}
	if _, err := runs.Claim(ctx, "ws", "r1", "", time.Minute, false); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Claim without an owner = %v, want ErrInvalid", err)
	}
	if _, err := runs.Claim(ctx, "ws", "r1", "w1", 0, false); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Claim with ttl 0 = %v, want ErrInvalid", err)
	}
	err := runs.AppendEvents(ctx, "ws", []store.RunEvent{{RunID: "r1", Seq: 0, Type: "x"}})
	if !errors.Is(err, store.ErrInvalid) {
		t.Errorf("AppendEvents with seq 0 = %v, want ErrInvalid", err)
	}
	if len(d.calls) != 0 {
		t.Fatalf("Core called the driver (%v) for arguments it must refuse itself", d.calls)
	}

	got, err := runs.Transition(ctx, "ws", "r1", []store.RunStatus{store.RunRunning}, store.RunFailed, store.RunUpdate{})
	if !errors.Is(err, store.ErrConflict) || got.Status != store.RunSucceeded {
		t.Errorf("Transition of a finished run = %+v, %v; want the stored run and ErrConflict", got, err)
	}
	if !strings.HasPrefix(err.Error(), "fake: transition run r1:") {
		t.Errorf("error %q does not name the driver and the operation", err)
	}
	if want := []string{"RunTransition", "RunGet"}; strings.Join(d.calls, ",") != strings.Join(want, ",") {
		t.Errorf("driver calls = %v, want %v", d.calls, want)
	}
}

// TestCoreRefusesBadRowsBeforeSQL holds validation to Core for every
// aggregate: a bad row is ErrInvalid, named by the driver, and reaches no
// verb (the recorder's nil Driver would panic).
func TestCoreRefusesBadRowsBeforeSQL(t *testing.T) {
	ctx := context.Background()
	c := store.NewCore(&recorder{})
	writes := map[string]func() error{
		"create workspace": func() error { _, err := c.Workspaces().Create(ctx, store.Workspace{}); return err },
		"get or create workspace": func() error {
			_, err := c.Workspaces().GetOrCreate(ctx, "")
			return err
		},
		"create api key": func() error {
			_, err := c.APIKeys().Create(ctx, store.APIKey{WorkspaceID: "ws", Hash: []byte("ac_key_in_clear")})
			return err
		},
		"put credential": func() error {
			_, err := c.Credentials().Put(ctx, store.Credential{WorkspaceID: "ws", Provider: "openai"})
			return err
		},
		"put upload": func() error {
			_, err := c.Uploads().Put(ctx, store.Upload{WorkspaceID: "ws", Name: "a.txt", Size: 3,
				ExpiresAt: time.Now().Add(time.Hour)})
			return err
		},
		"create oauth client": func() error {
			_, err := c.OAuthClients().Create(ctx, store.OAuthClient{WorkspaceID: "ws", Name: "bot",
				SecretHash: make([]byte, 32), Scopes: []string{"docsearch read"}})
			return err
		},
		"record usage": func() error {
			return c.Usage().Record(ctx, store.UsageRecord{WorkspaceID: "ws", Status: store.StatusOK},
				store.UsageRecord{WorkspaceID: "ws", Status: "maybe"})
		},
		"create workflow": func() error {
			_, err := c.Workflows().Create(ctx, store.Workflow{WorkspaceID: "ws", Name: "w", Definition: json.RawMessage(`{`)})
			return err
		},
		"save workflow": func() error {
			_, err := c.Workflows().Save(ctx, store.Workflow{ID: "w1", WorkspaceID: "ws", Definition: json.RawMessage(`{}`)})
			return err
		},
		"set tool setting": func() error {
			_, err := c.ToolSettings().Set(ctx, store.ToolSetting{WorkspaceID: "ws", Tool: " "})
			return err
		},
		"create mcp server": func() error {
			_, err := c.MCPServers().Create(ctx, store.MCPServer{WorkspaceID: "ws", Name: "files", URL: "ftp://x"})
			return err
		},
		"put openapi import": func() error {
			_, err := c.OpenAPIImports().Put(ctx, store.OpenAPIImport{WorkspaceID: "ws", Name: "pets",
				Document: "openapi: 3.0.0", Ciphertext: []byte("sealed")})
			return err
		},
	}
	for op, write := range writes {
		err := write()
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: error = %v, want ErrInvalid", op, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "fake: "+op+": ") {
			t.Errorf("%s: error %q does not name the driver and the operation", op, err)
		}
	}
}

// workspaceRecorder serves the workspace verbs: it holds no row until the
// first insert.
type workspaceRecorder struct {
	recorder
	stored *store.Workspace
}

func (r *workspaceRecorder) WorkspaceGetByName(_ context.Context, name string) (store.Workspace, error) {
	r.calls = append(r.calls, "WorkspaceGetByName")
	if r.stored == nil || r.stored.Name != name {
		return store.Workspace{}, store.ErrNotFound
	}
	return *r.stored, nil
}

func (r *workspaceRecorder) WorkspaceInsert(_ context.Context, p *store.WorkspaceInsertParams) error {
	r.calls = append(r.calls, "WorkspaceInsert")
	if !p.IfAbsent {
		return errors.New("GetOrCreate must let a concurrent creator win")
	}
	if p.Workspace.ID == "" || p.Workspace.CreatedAt.IsZero() {
		return errors.New("Core left the id or the time to the driver")
	}
	w := p.Workspace
	r.stored = &w
	return nil
}

// TestCoreGetOrCreateWorkspace holds GetOrCreate's race handling to Core:
// look, insert if absent, and read back whichever row won.
func TestCoreGetOrCreateWorkspace(t *testing.T) {
	d := &workspaceRecorder{}
	w, err := store.NewCore(d).Workspaces().GetOrCreate(context.Background(), "default")
	if err != nil {
		t.Fatal(err)
	}
	if d.stored == nil || w != *d.stored {
		t.Errorf("GetOrCreate = %+v, want the stored row %+v", w, d.stored)
	}
	if want := "WorkspaceGetByName,WorkspaceInsert,WorkspaceGetByName"; strings.Join(d.calls, ",") != want {
		t.Errorf("driver calls = %v, want %v", d.calls, want)
	}
}

// uploadRecorder serves the upload verbs as a database would: an empty
// BLOB may come back nil.
type uploadRecorder struct {
	recorder
	insert *store.UploadInsertParams
	get    []store.UploadGetParams
}

func (r *uploadRecorder) UploadInsert(_ context.Context, p *store.UploadInsertParams) error {
	r.insert = p
	return nil
}

func (r *uploadRecorder) UploadGet(_ context.Context, p *store.UploadGetParams) (store.Upload, error) {
	r.get = append(r.get, *p)
	return store.Upload{ID: p.ID, WorkspaceID: p.WorkspaceID, Name: "empty.txt"}, nil
}

// TestCoreUploads holds to Core what both drivers did: an empty upload is
// stored as an empty BLOB (not NULL), Get always fills Data while Info
// never does, and both hide uploads expired by now.
func TestCoreUploads(t *testing.T) {
	ctx := context.Background()
	d := &uploadRecorder{}
	up := store.NewCore(d).Uploads()
	if _, err := up.Put(ctx, store.Upload{WorkspaceID: "ws", Name: "empty.txt", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if d.insert == nil || d.insert.Upload.Data == nil || d.insert.Upload.ID == "" || d.insert.Upload.CreatedAt.IsZero() {
		t.Errorf("UploadInsert got %+v; want an id, a creation time and non-nil data", d.insert)
	}
	before := time.Now().Add(-time.Second)
	got, err := up.Get(ctx, "ws", "u1")
	if err != nil || got.Data == nil {
		t.Errorf("Get = %+v, %v; want non-nil data", got, err)
	}
	info, err := up.Info(ctx, "ws", "u1")
	if err != nil || info.Data != nil {
		t.Errorf("Info = %+v, %v; want nil data", info, err)
	}
	if len(d.get) != 2 || !d.get[0].Data || d.get[1].Data {
		t.Fatalf("UploadGet calls = %+v; want Get with data, then Info without", d.get)
	}
	for _, p := range d.get {
		if p.Now.Before(before) {
			t.Errorf("UploadGet Now = %v; want the current time, which hides expired uploads", p.Now)
		}
	}
}

// mcpRecorder keeps the server MCPServerInsert was given.
type mcpRecorder struct {
	recorder
	got []store.MCPServer
}

func (r *mcpRecorder) MCPServerInsert(_ context.Context, p *store.MCPServerInsertParams) error {
	r.got = append(r.got, p.Server)
	return nil
}

// TestCoreMCPServerCiphertext holds to Core that a server without
// credentials is stored with nil ciphertext, as it reads back, and that a
// sealed one is copied, not aliased to the caller's slice.
func TestCoreMCPServerCiphertext(t *testing.T) {
	ctx := context.Background()
	d := &mcpRecorder{}
	servers := store.NewCore(d).MCPServers()
	if _, err := servers.Create(ctx, store.MCPServer{WorkspaceID: "ws", Name: "open", URL: "https://x", Ciphertext: []byte{}}); err != nil {
		t.Fatal(err)
	}
	sealed := []byte("sealed")
	if _, err := servers.Create(ctx, store.MCPServer{WorkspaceID: "ws", Name: "closed", URL: "https://y",
		Ciphertext: sealed, KeyID: "k1"}); err != nil {
		t.Fatal(err)
	}
	sealed[0] = 'X'
	if len(d.got) != 2 || d.got[0].Ciphertext != nil || string(d.got[1].Ciphertext) != "sealed" {
		t.Errorf("MCPServerInsert got %+v; want nil ciphertext, then a copy of \"sealed\"", d.got)
	}
	if d.got[0].ID == "" || d.got[0].CreatedAt.IsZero() {
		t.Errorf("MCPServerInsert got %+v; want an id and a creation time from Core", d.got[0])
	}
}

// usageRecorder keeps what the usage verbs were given.
type usageRecorder struct {
	recorder
	insert *store.UsageInsertParams
	list   *store.UsageListParams
}

func (r *usageRecorder) UsageInsert(_ context.Context, p *store.UsageInsertParams) error {
	r.insert = p
	return nil
}

func (r *usageRecorder) UsageList(_ context.Context, p *store.UsageListParams) ([]store.UsageRecord, error) {
	r.list = p
	return nil, nil
}

// TestCoreUsage holds the defaults of Usage to Core: ids and times for
// records without them, times truncated as the databases keep them, and
// DefaultUsageLimit for a listing without a limit.
func TestCoreUsage(t *testing.T) {
	ctx := context.Background()
	d := &usageRecorder{}
	u := store.NewCore(d).Usage()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("x", 3600))
	if err := u.Record(ctx, store.UsageRecord{WorkspaceID: "ws", Status: store.StatusOK},
		store.UsageRecord{ID: "u2", WorkspaceID: "ws", Status: store.StatusError, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if d.insert == nil || len(d.insert.Records) != 2 {
		t.Fatalf("UsageInsert got %+v; want both records in one call", d.insert)
	}
	first, second := d.insert.Records[0], d.insert.Records[1]
	if first.ID == "" || first.CreatedAt.IsZero() {
		t.Errorf("first record %+v; want an id and the current time", first)
	}
	if second.ID != "u2" || !second.CreatedAt.Equal(store.Timestamp(at)) || second.CreatedAt.Location() != time.UTC {
		t.Errorf("second record %+v; want its id and its time in UTC microseconds", second)
	}
	if _, err := u.List(ctx, "ws", time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	if d.list == nil || d.list.Limit != store.DefaultUsageLimit {
		t.Errorf("UsageList got %+v; want Limit %d", d.list, store.DefaultUsageLimit)
	}
}

// workflowRecorder stores nothing: it has no versions of any workflow.
type workflowRecorder struct {
	recorder
	insert *store.WorkflowWriteParams
}

func (r *workflowRecorder) WorkflowInsert(_ context.Context, p *store.WorkflowWriteParams) (store.Workflow, error) {
	r.insert = p
	return p.Workflow, nil
}

func (r *workflowRecorder) WorkflowVersionList(context.Context, string, string) ([]store.WorkflowVersion, error) {
	return nil, nil
}

// TestCoreWorkflows holds to Core that a new workflow is version 1 with a
// copy of the caller's definition, and that a workflow without versions
// (every stored one has at least one) is not found.
func TestCoreWorkflows(t *testing.T) {
	ctx := context.Background()
	d := &workflowRecorder{}
	wf := store.NewCore(d).Workflows()
	def := json.RawMessage(`{"nodes":[]}`)
	if _, err := wf.Create(ctx, store.Workflow{WorkspaceID: "ws", Name: "w", Definition: def}); err != nil {
		t.Fatal(err)
	}
	def[0] = '['
	got := d.insert.Workflow
	if got.Version != 1 || got.ID == "" || got.CreatedAt.IsZero() || string(got.Definition) != `{"nodes":[]}` {
		t.Errorf("WorkflowInsert got %+v; want version 1, an id, a time and a copy of the definition", got)
	}
	if _, err := wf.Versions(ctx, "ws", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Versions of a workflow without versions = %v, want ErrNotFound", err)
	}
}
