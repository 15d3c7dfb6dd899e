package skill_test

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/skill"
)

func TestBuiltins(t *testing.T) {
	t.Parallel()
	got := skill.Builtins()
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
		if !s.Builtin {
			t.Errorf("%s: Builtin is false", s.Name)
		}
		if err := s.Validate(nil); err != nil {
			t.Errorf("%s: Validate = %v", s.Name, err)
		}
		if len(s.Instructions) < 1000 {
			t.Errorf("%s: %d bytes of instructions; a built-in skill should teach something", s.Name, len(s.Instructions))
		}
		// Every file the instructions name is in the skill, so
		// read_skill_file finds what load_skill points to.
		have := map[string]bool{}
		for _, f := range s.Files {
			have[f.Path] = true
			if len(f.Data) == 0 {
				t.Errorf("%s: %s is empty", s.Name, f.Path)
			}
		}
		for _, m := range regexp.MustCompile("`((?:references|templates)/[^`]+)`").FindAllStringSubmatch(s.Instructions, -1) {
			if !have[m[1]] {
				t.Errorf("%s: the instructions name %s, which the skill does not have", s.Name, m[1])
			}
		}
		if len(s.Files) == 0 {
			t.Errorf("%s: no resource files", s.Name)
		}
	}
	if diff := cmp.Diff([]string{"japanese-business-email", "meeting-notes", "writing-style-guide"}, names); diff != "" {
		t.Errorf("built-in skills (-want +got):\n%s", diff)
	}
	// The caller's copy: changing it leaves the next call's alone.
	got[0].Files[0].Path = "changed"
	if skill.Builtins()[0].Files[0].Path == "changed" {
		t.Error("Builtins returns shared slices")
	}
}
