package cli

import (
	"archive/zip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
)

// TestSkillsCommand: skills import reads a folder, a zip and a SKILL.md
// into the workspace, refuses a second import of a name without
// --replace, and skills list shows them beside the built-ins; each import
// is audited as the CLI's.
func TestSkillsCommand(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	md := "---\nname: onboarding\ndescription: Welcome new hires.\n---\n# Onboarding\n"
	os.MkdirAll(filepath.Join("onboarding", "checklists"), 0o755)
	os.WriteFile(filepath.Join("onboarding", "SKILL.md"), []byte(md), 0o644)
	os.WriteFile(filepath.Join("onboarding", "checklists", "day-one.md"), []byte("- laptop\n"), 0o644)

	if code, out, errOut := run(t, "skills", "import", "onboarding"); code != 0 || !strings.Contains(out, "imported skill onboarding (1 files)") {
		t.Fatalf("skills import DIR = %d %q %s", code, out, errOut)
	}
	if code, _, errOut := run(t, "skills", "import", "onboarding"); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Errorf("second import = %d %s; want it refused without --replace", code, errOut)
	}

	// A zip of another skill, and a lone SKILL.md replacing the first.
	f, _ := os.Create("notes.zip")
	zw := zip.NewWriter(f)
	w, _ := zw.Create("release-notes/SKILL.md")
	w.Write([]byte("---\nname: release-notes\ndescription: Write release notes.\n---\nGroup by feature.\n"))
	zw.Close()
	f.Close()
	if code, out, errOut := run(t, "skills", "import", "notes.zip"); code != 0 || !strings.Contains(out, "imported skill release-notes") {
		t.Fatalf("skills import ZIP = %d %q %s", code, out, errOut)
	}
	os.WriteFile("SKILL.md", []byte(strings.Replace(md, "Welcome", "Greet", 1)), 0o644)
	if code, out, errOut := run(t, "skills", "import", "--replace", "SKILL.md"); code != 0 || !strings.Contains(out, "replaced skill onboarding (0 files)") {
		t.Fatalf("skills import --replace SKILL.md = %d %q %s", code, out, errOut)
	}
	os.WriteFile("bad.md", []byte("---\nname: Bad\ndescription: d\n---\nx"), 0o644)
	if code, _, errOut := run(t, "skills", "import", "bad.md"); code == 0 || !strings.Contains(errOut, "name") {
		t.Errorf("import of a bad SKILL.md = %d %s; want the name named", code, errOut)
	}

	code, out, errOut := run(t, "skills", "list")
	if code != 0 {
		t.Fatalf("skills list = %d %s", code, errOut)
	}
	for _, want := range []string{"onboarding  ", "Greet new hires.", "release-notes", "meeting-notes  ", "built-in"} {
		if !strings.Contains(out, want) {
			t.Errorf("skills list lacks %q:\n%s", want, out)
		}
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join("data", "agentcraft.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err := st.Workspaces().GetByName(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	page, err := st.AuditLog().List(ctx, store.AuditFilter{WorkspaceID: ws.ID, Action: "skill."})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Events {
		got = append(got, e.Action+" "+e.Target+" "+e.Actor)
	}
	want := "skill.import skill:onboarding cli,skill.import skill:release-notes cli,skill.import skill:onboarding cli"
	if strings.Join(got, ",") != want {
		t.Errorf("audit rows = %v, want %s", got, want)
	}
}
