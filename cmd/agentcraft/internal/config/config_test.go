package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agentcraft.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestZeroConfiguration(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg, err := Load("", []string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Addr != "127.0.0.1:8080" || cfg.Database.URL != "sqlite://./data/agentcraft.db" || cfg.Server.Auth != "apikey" {
		t.Fatalf("zero config = %+v", cfg)
	}
	if !*cfg.DetectProviders {
		t.Fatal("provider detection must be on by default")
	}
}

func TestExplicitMissingFileFails(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), []string{})
	if err == nil {
		t.Fatal("a missing --config file must be an error")
	}
}

func TestPublicContract(t *testing.T) {
	p := write(t, `
server:   {addr: "127.0.0.1:9090"}
database: {url: "sqlite://./data/agentcraft.db"}
providers:
  - {name: local,  type: openai,    base_url: "http://127.0.0.1:11434/v1", api_key: "${OPENAI_API_KEY}"}
  - {name: claude, type: anthropic, api_key: "${ANTHROPIC_API_KEY}", retry: {max_retries: 5}}
agents:
  - {name: helper, model: "local/llama3.2", instructions: "You are helpful.", tools: [calculator, current_time]}
`)
	cfg, err := Load(p, []string{"OPENAI_API_KEY=sk-local", "ANTHROPIC_API_KEY=sk-ant"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Addr != "127.0.0.1:9090" {
		t.Errorf("addr = %q", cfg.Server.Addr)
	}
	got := []string{cfg.Providers[0].Name, cfg.Providers[0].Type, cfg.Providers[0].BaseURL, cfg.Providers[0].APIKey, cfg.Providers[1].APIKey}
	want := []string{"local", "openai", "http://127.0.0.1:11434/v1", "sk-local", "sk-ant"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	if cfg.Providers[1].Middleware.Retry.MaxRetries != 5 {
		t.Errorf("provider retry override lost: %+v", cfg.Providers[1].Middleware.Retry)
	}
	a := cfg.Agents[0]
	if a.Name != "helper" || a.Model != "local/llama3.2" || a.MaxSteps != 10 || !cmp.Equal(a.Tools, []string{"calculator", "current_time"}) {
		t.Errorf("agent = %+v", a)
	}
}

func TestUnknownKeyNamesItsPath(t *testing.T) {
	for _, tc := range []struct{ body, path string }{
		{"servr: {addr: x}", "servr"},
		{"server: {adr: x}", "server.adr"},
		{"providers:\n  - {name: a, type: openai, bse_url: x}", "providers[0].bse_url"},
		{"agents:\n  - {name: a, model: p/m}\n  - {name: b, model: p/m, toolz: []}", "agents[1].toolz"},
		{"providers:\n  - {name: a, type: openai, retry: {max_retrys: 2}}", "providers[0].retry.max_retrys"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.path+": unknown key") {
			t.Errorf("%q: err = %v, want it to name %s", tc.body, err, tc.path)
		}
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	p := write(t, "server: {addr: \"127.0.0.1:1\"}\n")
	cfg, err := Load(p, []string{
		"AGENTCRAFT_SERVER_ADDR=0.0.0.0:8081",
		"AGENTCRAFT_DATABASE_URL=postgres://u@h/db",
		"AGENTCRAFT_SERVER_SHUTDOWN_TIMEOUT=3s",
		"AGENTCRAFT_DETECT_PROVIDERS=false",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Addr != "0.0.0.0:8081" || cfg.Database.URL != "postgres://u@h/db" || cfg.Server.ShutdownTimeout != 3*time.Second || *cfg.DetectProviders {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
	if _, err := Load(p, []string{"AGENTCRAFT_SERVER_MAX_BODY_BYTES=lots"}); err == nil || !strings.Contains(err.Error(), "AGENTCRAFT_SERVER_MAX_BODY_BYTES") {
		t.Fatalf("bad override err = %v", err)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "EMPTY": ""}
	for in, want := range map[string]string{
		"${A}":            "1",
		"x${A}y${A}":      "x1y1",
		"${MISSING}":      "",
		"${MISSING:-d}":   "d",
		"${EMPTY:-d}":     "d",
		"no refs $A":      "no refs $A",
		"${A:-unused}-ok": "1-ok",
	} {
		got, err := Expand(in, env)
		if err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"${", "${A", "${1A}", "${A B}"} {
		if _, err := Expand(bad, env); err == nil {
			t.Errorf("Expand(%q) accepted", bad)
		}
	}
}

func TestEnvValueCannotInjectYAML(t *testing.T) {
	p := write(t, "providers:\n  - {name: p, type: openai, api_key: \"${KEY}\"}\n")
	cfg, err := Load(p, []string{"KEY=x\nserver: {auth: none}"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Auth != "apikey" || cfg.Providers[0].APIKey != "x\nserver: {auth: none}" {
		t.Fatalf("environment value changed structure: %+v", cfg)
	}
}

func TestValidation(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"server: {auth: open}", "server.auth"},
		{"server: {gc_percent: 5}", "server.gc_percent"},
		{"server: {memory_limit_mib: -2}", "server.memory_limit_mib"},
		{"providers:\n  - {name: a, type: gemini}", "providers[0].type"},
		{"providers:\n  - {name: a, type: openai}\n  - {name: a, type: openai}", "providers[1].name"},
		{"agents:\n  - {name: a, model: llama3}", "agents[0].model"},
		{"agents:\n  - {name: a, model: p/m, temperature: 5}", "agents[0].temperature: 5 must be from 0 to 2"},
		{"agents:\n  - {name: a, model: p/m, temperature: -0.1}", "agents[0].temperature"},
		{"database: {url: mysql://x}", "database.url"},
		{"log: {level: loud}", "log.level"},
		{"agents:\n  - {name: a, model: p/m, knowledge_bases: [handbook, ' faq']}", "agents[0].knowledge_bases[1]"},
		{"agents:\n  - {name: a, model: p/m, knowledge_bases: [handbook, handbook]}", `agents[0].knowledge_bases[1]: "handbook" is listed twice`},
		{"agents:\n  - {name: a, model: p/m, skills: [meeting-notes, Meeting_Notes]}", `agents[0].skills[1]: "Meeting_Notes" is not a skill name`},
		{"agents:\n  - {name: a, model: p/m, skills: [meeting-notes, meeting-notes]}", `agents[0].skills[1]: "meeting-notes" is listed twice`},
		{"search: {embedder: {base_url: 'http://localhost:11434/v1'}}", "search.embedder.model"},
		{"search: {embedder: {model: m, base_url: 'localhost:11434'}}", "search.embedder.base_url"},
		{"search: {embedder: {model: m, dimensions: -1}}", "search.embedder.dimensions"},
		{"workspaces:\n  - {guard: {injection: true}}", "workspaces[0].name"},
		{"workspaces:\n  - {name: a}\n  - {name: a}", `workspaces[1].name: "a" is defined twice`},
		{"workspaces:\n  - {name: a, retry: {max_retries: 2}}", "workspaces[0]: only guard and pii"},
		{"workspaces:\n  - {name: a, pii: {mode: shred}}", "workspaces[0]"},
		{"workspaces:\n  - {name: a, colour: red}", "workspaces[0].colour"},
		{"workflows: {max_steps_ceiling: -5}", "workflows.max_steps_ceiling"},
		{"worker: {shutdown_timeout: -1s}", "worker.shutdown_timeout"},
		{"worker: {shutdown_timout: 5s}", "worker.shutdown_timout"},
		{"workflows: {storage_quota_mib: -2}", "workflows.storage_quota_mib"},
		{"workflows: {max_steps: 20000}", "workflows.max_steps: 20000 is above the ceiling of 10000"},
		{"workflows: {max_steps: 600, max_steps_ceiling: 500}", "workflows.max_steps"},
		{"workflows: {timeout: 48h}", "workflows.timeout"},
		{"channels: {line: {channel_access_token: t}}", "channels.line.channel_secret"},
		{"channels: {line: {channel_secret: s}}", "channels.line.channel_access_token"},
		{"channels: {line: {channel_secret: s, channel_access_token: t, api_base_url: 'api.line.me'}}", "channels.line.api_base_url"},
		{"channels: {line: {channel_secret: s, channel_access_token: t, webhook: x}}", "channels.line.webhook"},
		{"tasks: {model: gpt-4o}", "tasks.model"},
		{"tasks: {approval_ttl: -1h}", "tasks.approval_ttl"},
		{"tasks: {hold_tools: low}", "tasks.hold_tools"},
		{"workspaces:\n  - {name: a, tasks: {approval_ttl: -2h}}", "workspaces[0].tasks.approval_ttl"},
		{"workspaces:\n  - {name: a, tasks: {trusted: [x]}}", "workspaces[0].tasks.trusted"},
		{"tasks: {calendar: {url: 'dav.example.com/cal'}}", "tasks.calendar.url"},
		{"tasks: {calendar: {url: 'https://dav.example.com/cal/', token: t, password: p}}", "tasks.calendar: set token"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want mention of %s", tc.body, err, tc.want)
		}
	}
}

// TestWorkflowLimits: the run ceilings and the storage quota are read
// from workflows.* (zero means the control plane's defaults).
func TestWorkflowLimits(t *testing.T) {
	cfg, err := Load(write(t, "workflows: {max_steps_ceiling: 500, timeout_ceiling: 2h, storage_quota_mib: 64}"), []string{})
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Workflows
	if w.MaxStepsCeiling != 500 || w.TimeoutCeiling != 2*time.Hour || w.StorageQuotaMiB != 64 {
		t.Errorf("workflows = %+v; want ceilings 500 and 2h, quota 64 MiB", w)
	}
	// The engine's default of 1000 steps would pass a ceiling of 500.
	if w.MaxSteps != 500 || w.Timeout != 0 {
		t.Errorf("defaults under the ceilings: max_steps %d, timeout %v; want 500 and 0 (the engine's 30m is under 2h)", w.MaxSteps, w.Timeout)
	}
}

// TestWorkerShutdownTimeout: worker.shutdown_timeout is read, and 15s
// when unset.
func TestWorkerShutdownTimeout(t *testing.T) {
	cfg, err := Load(write(t, "worker: {shutdown_timeout: 40s}"), []string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Worker.ShutdownTimeout != 40*time.Second {
		t.Errorf("worker.shutdown_timeout = %v, want 40s", cfg.Worker.ShutdownTimeout)
	}
	cfg, err = Load(write(t, "log: {level: info}"), []string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Worker.ShutdownTimeout != 15*time.Second {
		t.Errorf("default worker.shutdown_timeout = %v, want 15s", cfg.Worker.ShutdownTimeout)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("server: {addr: x}\nagents: [{name: a, model: p/m}]"))
	f.Add([]byte("providers: [{name: a, type: openai, api_key: '${K:-d}'}]"))
	f.Add([]byte("- not a map"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cfg Config
		_ = Parse(data, map[string]string{"K": "v"}, &cfg)
	})
}

func TestSearchEmbedder(t *testing.T) {
	cfg, err := Load(write(t, "search:\n  embedder: {base_url: 'http://127.0.0.1:11434/v1', model: nomic-embed-text, api_key: '${EMB_KEY}', dimensions: 768}\n"), []string{"EMB_KEY=sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	want := Embedder{BaseURL: "http://127.0.0.1:11434/v1", Model: "nomic-embed-text", APIKey: "sk-test", Dimensions: 768}
	if diff := cmp.Diff(want, cfg.Search.Embedder); diff != "" {
		t.Errorf("embedder (-want +got):\n%s", diff)
	}
	if _, err := Load(write(t, "search: {embedder: {modle: x}}"), []string{}); err == nil || !strings.Contains(err.Error(), "search.embedder.modle") {
		t.Errorf("typo: %v", err)
	}
}

func TestWorkspaces(t *testing.T) {
	cfg, err := Load(write(t, "workspaces:\n  - name: acme\n    guard: {injection: true}\n    pii: {locales: [JP], mode: mask}\n"), []string{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Workspaces) != 1 || cfg.Workspaces[0].Name != "acme" || cfg.Workspaces[0].Middleware.Guard == nil ||
		!cfg.Workspaces[0].Middleware.Guard.Injection || cfg.Workspaces[0].Middleware.PII == nil {
		t.Fatalf("workspaces = %+v", cfg.Workspaces)
	}
}

// TestPathsRelativeToConfigFile: with --config, the default ./data and
// relative paths in the file are found beside the file, not in the
// working directory; environment overrides stay relative to it.
func TestPathsRelativeToConfigFile(t *testing.T) {
	confDir := t.TempDir()
	p := filepath.Join(confDir, "agentcraft.yaml")
	if err := os.WriteFile(p, []byte("tools:\n  files_dir: docs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // somewhere else
	cfg, err := Load(p, []string{})
	if err != nil {
		t.Fatal(err)
	}
	want := "sqlite://" + filepath.ToSlash(filepath.Join(confDir, "data", "agentcraft.db"))
	if cfg.Database.URL != want {
		t.Errorf("database.url = %q, want %q", cfg.Database.URL, want)
	}
	if want := filepath.Join(confDir, "data", "master.key"); cfg.Secrets.MasterKeyFile != want {
		t.Errorf("secrets.master_key_file = %q, want %q", cfg.Secrets.MasterKeyFile, want)
	}
	if want := filepath.Join(confDir, "docs"); cfg.Tools.FilesDir != want {
		t.Errorf("tools.files_dir = %q, want %q", cfg.Tools.FilesDir, want)
	}

	cfg, err = Load(p, []string{"AGENTCRAFT_DATABASE_URL=sqlite://./other.db"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Database.URL != "sqlite://./other.db" {
		t.Errorf("an environment override was moved: %q", cfg.Database.URL)
	}
}

// TestLINEContract: the channels.line section other programs write, with
// its secrets from the environment.
func TestLINEContract(t *testing.T) {
	cfg, err := Load(write(t, `
channels:
  line:
    channel_secret: "${LINE_CHANNEL_SECRET}"
    channel_access_token: "${LINE_CHANNEL_ACCESS_TOKEN}"
    api_base_url: "https://api.line.me"
    workspace: default
tasks:
  model: openai/gpt-4o-mini
  approval_ttl: 2h
  trusted_executors: [scheduler]
  calendar: {url: "https://dav.example.com/calendars/team/work/", username: team, password: "${CALDAV_PASSWORD}"}
`), []string{"LINE_CHANNEL_SECRET=sec", "LINE_CHANNEL_ACCESS_TOKEN=tok", "CALDAV_PASSWORD=pw"})
	if err != nil {
		t.Fatal(err)
	}
	want := LINE{ChannelSecret: "sec", ChannelAccessToken: "tok", APIBaseURL: "https://api.line.me", Workspace: "default"}
	if cfg.Channels.LINE == nil || *cfg.Channels.LINE != want {
		t.Errorf("channels.line = %+v, want %+v", cfg.Channels.LINE, want)
	}
	if cfg.Tasks.Model != "openai/gpt-4o-mini" || cfg.Tasks.ApprovalTTL != 2*time.Hour || cfg.Tasks.Calendar == nil || cfg.Tasks.Calendar.Password != "pw" ||
		len(cfg.Tasks.TrustedExecutors) != 1 || cfg.Tasks.TrustedExecutors[0] != "scheduler" {
		t.Errorf("tasks = %+v", cfg.Tasks)
	}
	cfg, err = Load(write(t, "workspaces:\n  - {name: ops, guard: {injection: true}, tasks: {approval_ttl: 1h, allow_self_approval: true, trusted_executors: [scheduler]}}"), []string{})
	if err != nil || len(cfg.Workspaces) != 1 || cfg.Workspaces[0].Tasks == nil || cfg.Workspaces[0].Tasks.ApprovalTTL != time.Hour ||
		cfg.Workspaces[0].Tasks.AllowSelfApproval == nil || !*cfg.Workspaces[0].Tasks.AllowSelfApproval || !cfg.Workspaces[0].Middleware.Guard.Injection {
		t.Errorf("workspaces[0] with tasks = %+v, %v", cfg.Workspaces, err)
	}
	if cfg, err := Load(write(t, "server: {addr: ':0'}"), []string{}); err != nil || cfg.Channels.LINE != nil {
		t.Errorf("without channels.line: %+v, %v; want the channel off", cfg.Channels.LINE, err)
	}
}

// TestImages: tools.images, the image back end, with its key from the
// environment, its workflow path relative to the file, and every
// mistake named by its path.
func TestImages(t *testing.T) {
	p := write(t, `
tools:
  images:
    backend: comfyui
    base_url: "http://127.0.0.1:8188"
    workflow: workflows/txt2img.json
    timeout: 2m
    poll_interval: 500ms
    keep: 24h
`)
	cfg, err := Load(p, []string{})
	if err != nil {
		t.Fatal(err)
	}
	want := Images{Backend: ImagesComfyUI, BaseURL: "http://127.0.0.1:8188", Workflow: filepath.Join(filepath.Dir(p), "workflows", "txt2img.json"),
		Timeout: 2 * time.Minute, PollInterval: 500 * time.Millisecond, Keep: 24 * time.Hour}
	if diff := cmp.Diff(want, cfg.Tools.Images); diff != "" {
		t.Errorf("tools.images (-want +got):\n%s", diff)
	}

	// Inline workflows stay as written; the key comes from ${ENV}.
	cfg, err = Load(write(t, `
tools:
  images: {backend: openai, api_key: "${OPENAI_API_KEY}", model: dall-e-3}
`), []string{"OPENAI_API_KEY=sk-img"})
	if err != nil || cfg.Tools.Images.APIKey != "sk-img" || cfg.Tools.Images.Model != "dall-e-3" {
		t.Fatalf("openai = %+v, %v", cfg.Tools.Images, err)
	}
	inline := `{"6": {"class_type": "CLIPTextEncode", "inputs": {"text": "{{prompt}}"}}}`
	cfg, err = Load(write(t, "tools:\n  images:\n    backend: comfyui\n    base_url: http://gpu:8188\n    workflow: '"+inline+"'\n"), []string{})
	if err != nil || cfg.Tools.Images.Workflow != inline || !cfg.Tools.Images.InlineWorkflow() {
		t.Fatalf("inline workflow = %q, %v", cfg.Tools.Images.Workflow, err)
	}
	// Scalars are overridable like every other key.
	cfg, err = Load(write(t, ""), []string{"AGENTCRAFT_TOOLS_IMAGES_BACKEND=openai", "AGENTCRAFT_TOOLS_IMAGES_TIMEOUT=90s"})
	if err != nil || cfg.Tools.Images.Backend != ImagesOpenAI || cfg.Tools.Images.Timeout != 90*time.Second {
		t.Fatalf("env overrides = %+v, %v", cfg.Tools.Images, err)
	}
	if s := cfg.Tools.Images; s.LogValue().String() == "" || strings.Contains(Images{APIKey: "sk-x"}.LogValue().String(), "sk-x") {
		t.Error("LogValue shows the key")
	}

	for _, tc := range []struct{ body, want string }{
		{"tools: {images: {backend: dalle}}", `tools.images.backend: "dalle" is not openai or comfyui`},
		{"tools: {images: {base_url: 'http://x'}}", "tools.images.backend: is empty"},
		{"tools: {images: {backend: comfyui, workflow: w.json}}", "tools.images.base_url: is empty"},
		{"tools: {images: {backend: comfyui, base_url: 'http://x:8188'}}", "tools.images.workflow: is empty"},
		{"tools: {images: {backend: comfyui, base_url: 'http://x:8188', workflow: w.json, model: sdxl}}", "tools.images.model: is for the openai back end"},
		{"tools: {images: {backend: openai, workflow: w.json}}", "tools.images.workflow: is for the comfyui back end"},
		{"tools: {images: {backend: openai, poll_interval: 1s}}", "tools.images.poll_interval: is for the comfyui back end"},
		{"tools: {images: {backend: openai, base_url: 'api.openai.com'}}", "tools.images.base_url"},
		{"tools: {images: {backend: openai, timeout: -1s}}", "tools.images.timeout"},
		{"tools: {images: {backend: comfyui, base_url: 'http://x', workflow: w, timeout: 1s, poll_interval: 2s}}", "tools.images.poll_interval: 2s is not shorter than timeout 1s"},
		{"tools: {images: {backend: openai, keep: 1s}}", "tools.images.keep"},
		{"tools: {images: {backend: openai, modle: x}}", "tools.images.modle: unknown key"},
	} {
		_, err := Load(write(t, tc.body), []string{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want mention of %s", tc.body, err, tc.want)
		}
	}
}

func TestRetention(t *testing.T) {
	cfg, err := Load(write(t, "retention:\n  run_events: 30d\n  checkpoints: 2w\n  audit: \"\"\n  queue_jobs: keep\n  interval: 30m\n"), []string{"AGENTCRAFT_RETENTION_CONVERSATIONS=180d"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Retention.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if p["run_events"] != 30*24*time.Hour || p["checkpoints"] != 14*24*time.Hour || p["conversations"] != 180*24*time.Hour || p["audit"] != 0 {
		t.Errorf("policy = %v", p)
	}
	if cfg.Retention.QueueJobRetention() != -1 || cfg.Retention.Interval != 30*time.Minute {
		t.Errorf("retention = %+v", cfg.Retention)
	}
	for body, want := range map[string]string{
		"retention:\n  run_events: soon\n": "retention.run_events: \"soon\" is not an age",
		"retention:\n  audit: 2h\n":        "retention.audit: 2h is under a day",
		"retention:\n  runs: 30d\n":        "retention.runs: unknown key",
		"retention:\n  interval: -1h\n":    "retention.interval",
	} {
		_, err := Load(write(t, body), []string{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) = %v, want %q", body, err, want)
		}
	}
}
