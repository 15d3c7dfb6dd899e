package lineapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agentcraftlab/agentcraft/server/lineapi"
	"github.com/agentcraftlab/agentcraft/server/lineapi/linetest"
)

// The webhook answers LINE's verify request (no events) once the
// signature checks out, and refuses a body signed with another secret.
func ExampleChannel_Webhook() {
	ch, err := lineapi.New(lineapi.Options{
		ChannelSecret:      "channel-secret",
		ChannelAccessToken: "channel-access-token",
		WorkspaceID:        "ws_1",
		Tasks:              quietTasks{},
		Accounts:           fakeAccounts{},
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/line/webhook", ch.Webhook()) // public: the signature authenticates

	body := linetest.Body(linetest.UserID("bot"))
	for _, s := range []string{"channel-secret", "another-secret"} {
		r := httptest.NewRequest(http.MethodPost, "/api/line/webhook", bytes.NewReader(body))
		r.Header.Set("x-line-signature", linetest.Sign(s, body))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// 200
	// 401
}

func ExampleRetryKey() {
	fmt.Println(lineapi.RetryKey("ntf_1") == lineapi.RetryKey("ntf_1"), len(lineapi.RetryKey("ntf_1")))
	// Output: true 36
}
