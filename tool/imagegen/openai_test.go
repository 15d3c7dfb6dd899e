package imagegen_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/tool/imagegen"
	"github.com/agentcraftlab/agentcraft/tool/imagegen/imagegentest"
)

func newOpenAI(t *testing.T, fake *imagegentest.OpenAI, model string) *imagegen.OpenAI {
	t.Helper()
	be, err := imagegen.NewOpenAI(fake.Client(), &imagegen.OpenAIOptions{BaseURL: fake.BaseURL(), APIKey: imagegentest.Key, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	return be
}

func TestOpenAIBase64(t *testing.T) {
	fake := imagegentest.NewOpenAI(t, nil)
	be := newOpenAI(t, fake, "")
	images, err := be.Generate(t.Context(), imagegen.Request{Prompt: "a lighthouse at dawn", Size: "1536x1024", N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 2 {
		t.Fatalf("%d images, want 2", len(images))
	}
	for i, img := range images {
		if !bytes.Equal(img.Data, imagegentest.PNG(int64(i+1))) || img.MIME != "image/png" || img.Seed != nil {
			t.Errorf("image %d: %d bytes, %s, seed %v; want the fake's PNG %d", i, len(img.Data), img.MIME, img.Seed, i+1)
		}
	}
	// gpt-image models refuse response_format (the fake too): it must be
	// left out, and the defaults filled in.
	want := []imagegentest.OpenAIRequest{{Model: imagegen.DefaultOpenAIModel, Prompt: "a lighthouse at dawn", N: ptr(2), Size: "1536x1024"}}
	if diff := cmp.Diff(want, fake.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestOpenAIURL(t *testing.T) {
	// dall-e models default to url answers unless asked for b64_json;
	// AnswerURL makes the fake answer urls anyway, as some compatible
	// servers do, so the back end must fetch them.
	fake := imagegentest.NewOpenAI(t, &imagegentest.OpenAIOptions{AnswerURL: true})
	be := newOpenAI(t, fake, "dall-e-3")
	images, err := be.Generate(t.Context(), imagegen.Request{Prompt: "a fox"})
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || !bytes.Equal(images[0].Data, imagegentest.PNG(1)) {
		t.Fatalf("images = %d, want the fake's PNG fetched from its url", len(images))
	}
	if got := fake.Requests(); len(got) != 1 || got[0].ResponseFormat != "b64_json" || got[0].Size != "" || got[0].N == nil || *got[0].N != 1 {
		t.Errorf("request = %+v, want response_format b64_json, n 1 and no size", got)
	}
	if got := fake.FileAuth(); len(got) != 1 || got[0] != "Bearer "+imagegentest.Key {
		t.Errorf("file fetch auth = %q, want the key (the url is on the API's host)", got)
	}
}

// TestOpenAIURLElsewhere: a url on another host is fetched through the
// same client, without the API key.
func TestOpenAIURLElsewhere(t *testing.T) {
	var auth []string
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		w.Write(imagegentest.PNG(7))
	}))
	defer cdn.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"created":1,"data":[{"url":"` + cdn.URL + `/img/1.png?sig=x"}]}`))
	}))
	defer api.Close()
	be, err := imagegen.NewOpenAI(api.Client(), &imagegen.OpenAIOptions{BaseURL: api.URL + "/v1/", APIKey: "sk-secret"})
	if err != nil {
		t.Fatal(err)
	}
	images, err := be.Generate(t.Context(), imagegen.Request{Prompt: "a fox"})
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 1 || !bytes.Equal(images[0].Data, imagegentest.PNG(7)) {
		t.Fatalf("images = %v", images)
	}
	if len(auth) != 1 || auth[0] != "" {
		t.Errorf("CDN saw Authorization %q: the key must not leave the API's host", auth)
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name string
		opts *imagegentest.OpenAIOptions
		key  string
		req  imagegen.Request
		want string
	}{
		{name: "wrong key", key: "sk-wrong", req: imagegen.Request{Prompt: "x"}, want: "HTTP 401: Incorrect API key provided."},
		{name: "server error", opts: &imagegentest.OpenAIOptions{Status: 500, Message: "The server had an error"}, req: imagegen.Request{Prompt: "x"},
			want: "HTTP 500: The server had an error"},
		{name: "not an image", opts: &imagegentest.OpenAIOptions{Image: func(int) []byte { return []byte("<html>quota exceeded</html>") }},
			req: imagegen.Request{Prompt: "x"}, want: "data[0]: the answer is not an image (its bytes read as text/html"},
		{name: "negative prompt", req: imagegen.Request{Prompt: "x", NegativePrompt: "blur"}, want: "negative_prompt: the OpenAI images API has no negative prompt"},
		{name: "seed", req: imagegen.Request{Prompt: "x", Seed: ptr(int64(1))}, want: "seed: the OpenAI images API takes no seed"},
		{name: "empty prompt", req: imagegen.Request{Prompt: " "}, want: "prompt is empty"},
		{name: "bad size", req: imagegen.Request{Prompt: "x", Size: "big"}, want: `size "big" is not WIDTHxHEIGHT`},
		{name: "too many", req: imagegen.Request{Prompt: "x", N: 9}, want: "n is 9: ask for 1 to 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := imagegentest.NewOpenAI(t, tt.opts)
			key := imagegentest.Key
			if tt.key != "" {
				key = tt.key
			}
			be, err := imagegen.NewOpenAI(fake.Client(), &imagegen.OpenAIOptions{BaseURL: fake.BaseURL(), APIKey: key})
			if err != nil {
				t.Fatal(err)
			}
			_, err = be.Generate(t.Context(), tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestOpenAIBadAnswers(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"data":[]}`, "the answer has no images"},
		{`{"data":[{}]}`, "data[0] has neither b64_json nor url"},
		{`{"data":[{"b64_json":"%%%"}]}`, "data[0].b64_json is not base64"},
		{`{"data":[{"url":"file:///etc/passwd"}]}`, "is not an absolute http or https URL"},
		{`<html>`, "the answer is not the images API's JSON"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tt.body)) }))
		be, err := imagegen.NewOpenAI(srv.Client(), &imagegen.OpenAIOptions{BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := be.Generate(t.Context(), imagegen.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("answer %s: error = %v, want %q", tt.body, err, tt.want)
		}
		srv.Close()
	}
}

func TestNewOpenAIRefuses(t *testing.T) {
	if _, err := imagegen.NewOpenAI(nil, nil); err == nil || !strings.Contains(err.Error(), "no HTTP client") {
		t.Errorf("nil client: %v", err)
	}
	for _, u := range []string{"ftp://x", "http://user:pw@host/v1", "/v1", "http://host/v1?x=1"} {
		if _, err := imagegen.NewOpenAI(http.DefaultClient, &imagegen.OpenAIOptions{BaseURL: u}); err == nil {
			t.Errorf("base URL %q accepted", u)
		}
	}
}

func TestOpenAIOptionsRedacted(t *testing.T) {
	o := imagegen.OpenAIOptions{APIKey: "sk-secret", Model: "m"}
	if s := o.String(); strings.Contains(s, "sk-secret") || !strings.Contains(s, "[redacted]") {
		t.Errorf("String() = %s", s)
	}
}
