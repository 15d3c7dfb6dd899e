package surfaces

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
)

// TestFileAgentsSurviveOtherProcesses: with `serve --config a.yaml`
// running, `agentcraft run`, `worker` and `kb` started with another file
// on the same database leave every agent of a.yaml answering. Earlier
// versions stored file agents and each process deleted the ones its own
// file did not define.
func TestFileAgentsSurviveOtherProcesses(t *testing.T) {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("set %s: worker and run share the server's database only on PostgreSQL", dsnEnv)
	}
	bin := buildBinary(t)
	dbURL := freshDatabase(t, dsn)
	fake := llmtest.NewOpenAI(t)
	fake.Repeat(llmtest.Turn{Text: "alpha here"})
	dir := t.TempDir()
	port := freePort(t)
	write := func(name, agents string) string {
		p := filepath.Join(dir, name)
		cfg := fmt.Sprintf(`server: {addr: "127.0.0.1:%d"}
database: {url: %q}
detect_providers: false
providers: [{name: up, type: openai, base_url: %q, api_key: k}]
agents:
%s`, port, dbURL, fake.URL+"/v1", agents)
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", "  - {name: alpha, model: up/m}\n  - {name: beta, model: up/m}\n")
	b := write("b.yaml", "  - {name: gamma, model: up/m}\n")
	var mk [32]byte
	rand.Read(mk[:])
	env := append(os.Environ(), "AGENTCRAFT_MASTER_KEY="+base64.StdEncoding.EncodeToString(mk[:]), "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=")

	startProcess(t, bin, env, dir, "serve", "--config", a)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, base)
	key := strings.TrimSpace(runCLI(t, bin, env, dir, "keys", "create", "--workspace", "default", "--config", a))
	c := &client{t: t, base: base, key: key}
	answers := func(when string) {
		t.Helper()
		for _, name := range []string{"alpha", "beta"} {
			got, err := c.v1(name, "hi")
			if err != nil || got != "alpha here" {
				t.Errorf("%s: agent %s = %q, %v; want it answering", when, name, got, err)
			}
		}
	}
	answers("at start")

	wf := filepath.Join(dir, "wf.json")
	os.WriteFile(wf, []byte(`{"name":"noop","nodes":[{"id":"start","type":"start"},{"id":"end","type":"end"}],"edges":[{"id":"e","source":"start","target":"end"}]}`), 0o600)
	runCLI(t, bin, env, dir, "run", wf, "--input", "x", "--config", b)
	answers("after agentcraft run --config b.yaml")
	runCLI(t, bin, env, dir, "kb", "list", "--config", b)
	answers("after agentcraft kb list --config b.yaml")

	w := exec.Command(bin, "worker", "--config", b)
	// Its own name in run leases: serve executes under the host name, and
	// a worker refuses a live process's name.
	w.Env, w.Dir = append(env, "AGENTCRAFT_WORKER_ID=fileagents-worker"), dir
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // long enough to have started and loaded b.yaml
	answers("with a worker --config b.yaml running")
	w.Process.Signal(os.Interrupt)
	w.Wait()
	answers("after the worker stopped")
}
