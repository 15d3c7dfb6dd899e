package strictjson_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/internal/strictjson"
)

type rule struct {
	Name string `json:"name"`
}

type inner struct {
	Rules []rule          `json:"rules,omitempty"`
	Wait  time.Duration   `json:"wait"`
	Raw   json.RawMessage `json:"raw"`
	Tags  map[string]rule `json:"tags"`
}

type base struct {
	Guard *inner `json:"guard"`
}

type doc struct {
	base
	Progress bool `json:"tool_progress"`
	Skip     int  `json:"-"`
	Plain    string
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, data string
		want       string // the unknown path, "" for none
	}{
		{"all known", `{"guard":{"rules":[{"name":"a"}],"wait":5,"raw":{"anything":1},"tags":{"x":{"name":"b"}}},"tool_progress":true,"Plain":"p"}`, ""},
		{"case-insensitive as encoding/json", `{"GUARD":{"Rules":[]},"plain":"p"}`, ""},
		{"top level", `{"gaurd":{}}`, "mw.gaurd"},
		{"inside an embedded struct's field", `{"guard":{"rulez":[]}}`, "mw.guard.rulez"},
		{"inside an array element", `{"guard":{"rules":[{"name":"a"},{"nme":"b"}]}}`, "mw.guard.rules[1].nme"},
		{"inside a map value", `{"guard":{"tags":{"x":{"nam":"b"}}}}`, "mw.guard.tags.x.nam"},
		{"a field tagged -", `{"Skip":1}`, "mw.Skip"},
		{"first in sorted order", `{"zz":1,"aa":2}`, "mw.aa"},
		{"an empty or dotted key is quoted", `{"guard":{"a.b":1}}`, `mw.guard."a.b"`},
		{"not JSON is the decoder's business", `{"guard":`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := strictjson.Check([]byte(tt.data), &doc{}, "mw")
			var ue *strictjson.UnknownFieldError
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if !errors.As(err, &ue) {
				t.Fatalf("Check = %v, want an *UnknownFieldError", err)
			}
			if ue.Path != tt.want {
				t.Errorf("Path %q, want %q", ue.Path, tt.want)
			}
		})
	}
}

func TestCheckNamesKnownKeys(t *testing.T) {
	err := strictjson.Check([]byte(`{"gaurd":{}}`), &doc{}, "")
	want := `unknown field "gaurd": use one of Plain, guard, tool_progress`
	if err == nil || err.Error() != want {
		t.Fatalf("Check = %v, want %q", err, want)
	}
	var ue *strictjson.UnknownFieldError
	errors.As(err, &ue)
	if diff := cmp.Diff([]string{"Plain", "guard", "tool_progress"}, ue.Known); diff != "" {
		t.Errorf("Known (-want +got):\n%s", diff)
	}
}

// FuzzCheck: any document, against a type with structs, pointers, slices,
// maps and raw JSON, is judged without panicking, and a reported path is
// never empty.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"guard":{"rules":[{"name":"a","x":1}]},"tool_progress":true}`))
	f.Add([]byte(`{"guard":{"tags":{"k":{"nam":1}}},"Plain":[1,2]}`))
	f.Add([]byte(`[{"a":1}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ue *strictjson.UnknownFieldError
		if err := strictjson.Check(data, &doc{}, ""); errors.As(err, &ue) && ue.Path == "" {
			t.Errorf("Check(%q) reported an empty path", data)
		}
	})
}
