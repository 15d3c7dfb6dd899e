package config

import (
	"fmt"
	"net/url"
	"time"
)

// Channels configures the chat channels people reach AgentCraft from.
type Channels struct {
	// LINE is the LINE Messaging API channel; nil (the key absent) turns
	// it off.
	LINE *LINE `yaml:"line"`
}

// LINE configures the LINE channel. Its webhook is POST
// /api/line/webhook (public; authenticated by LINE's x-line-signature).
type LINE struct {
	// ChannelSecret verifies webhook signatures: "${LINE_CHANNEL_SECRET}".
	ChannelSecret string `yaml:"channel_secret"`
	// ChannelAccessToken sends replies and pushes:
	// "${LINE_CHANNEL_ACCESS_TOKEN}".
	ChannelAccessToken string `yaml:"channel_access_token"`
	// APIBaseURL is LINE's API. Default https://api.line.me; tests point
	// it at a local server.
	APIBaseURL string `yaml:"api_base_url"`
	// Workspace is the workspace (by name) whose tasks the channel makes.
	// Default the server's workspace.
	Workspace string `yaml:"workspace"`
}

// Tasks configures the task control plane.
type Tasks struct {
	// Model ("provider/model") reads plain-language requests into intents
	// and words the built-in agents' answers. Empty: only structured
	// intents (POST /api/tasks with "intent") are taken.
	Model string `yaml:"model"`
	// ApprovalTTL is how long an approval may be decided. Default 24h.
	ApprovalTTL time.Duration `yaml:"approval_ttl"`
	// AllowSelfApproval lets the requester of a high-capability task
	// approve it. Default false.
	AllowSelfApproval bool `yaml:"allow_self_approval"`
	// CompensateOnFailure undoes a failed task's side effects at once.
	// Default false (POST /api/tasks/{id}/compensate does it on demand).
	CompensateOnFailure bool `yaml:"compensate_on_failure"`
	// HoldTools is the capability from which an agent's tool call, on any
	// surface, is held for approval as a task instead of made in the run:
	// "high" (default: high needs a human every time), "medium", or "off".
	HoldTools string `yaml:"hold_tools"`
	// TrustedExecutors are agents (research, scheduler, a worker-API
	// executor's name) whose medium steps run without an approval; high
	// steps always wait for a person.
	TrustedExecutors []string `yaml:"trusted_executors"`
	// Calendar is the CalDAV calendar of the Scheduler agent's events;
	// nil leaves calendar_create_event unavailable.
	Calendar *Calendar `yaml:"calendar"`
}

// WorkspaceTasks is a workspace's task policy; unset keys take tasks:'s.
type WorkspaceTasks struct {
	ApprovalTTL         time.Duration `yaml:"approval_ttl"`
	AllowSelfApproval   *bool         `yaml:"allow_self_approval"`
	CompensateOnFailure *bool         `yaml:"compensate_on_failure"`
	TrustedExecutors    []string      `yaml:"trusted_executors"`
}

// Calendar is a CalDAV calendar collection.
type Calendar struct {
	// URL is the collection, such as
	// https://dav.example.com/calendars/team/work/.
	URL      string `yaml:"url"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// Token is a bearer token, instead of username and password.
	Token string `yaml:"token"`
}

// validateTasks reports the problems of the channels and tasks sections.
func (c *Config) validateTasks(bad func(path, format string, args ...any)) {
	if l := c.Channels.LINE; l != nil {
		if l.ChannelSecret == "" {
			bad("channels.line.channel_secret", "is empty; set it to \"${LINE_CHANNEL_SECRET}\" (the channel's secret in the LINE Developers console)")
		}
		if l.ChannelAccessToken == "" {
			bad("channels.line.channel_access_token", "is empty; set it to \"${LINE_CHANNEL_ACCESS_TOKEN}\"")
		}
		if l.APIBaseURL != "" {
			if u, err := url.Parse(l.APIBaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				bad("channels.line.api_base_url", "%q is not an http(s) URL such as https://api.line.me", l.APIBaseURL)
			}
		}
	}
	switch c.Tasks.HoldTools {
	case "", "off", "medium", "high":
	default:
		bad("tasks.hold_tools", "%q is not off, medium or high", c.Tasks.HoldTools)
	}
	if c.Tasks.ApprovalTTL < 0 {
		bad("tasks.approval_ttl", "%v is negative; give a duration such as 24h", c.Tasks.ApprovalTTL)
	}
	for i, w := range c.Workspaces {
		if w.Tasks != nil && w.Tasks.ApprovalTTL < 0 {
			bad(fmt.Sprintf("workspaces[%d].tasks.approval_ttl", i), "%v is negative; give a duration such as 24h", w.Tasks.ApprovalTTL)
		}
	}
	if cal := c.Tasks.Calendar; cal != nil {
		if u, err := url.Parse(cal.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("tasks.calendar.url", "%q is not the http(s) URL of a CalDAV calendar collection", cal.URL)
		}
		if cal.Token != "" && cal.Password != "" {
			bad("tasks.calendar", "set token or username and password, not both")
		}
	}
	if m := c.Tasks.Model; m != "" {
		if _, _, ok := cutModel(m); !ok {
			bad("tasks.model", "%q is not provider/model, such as openai/gpt-4o-mini", m)
		}
	}
}

func cutModel(m string) (provider, model string, ok bool) {
	for i := 0; i < len(m); i++ {
		if m[i] == '/' {
			return m[:i], m[i+1:], i > 0 && i < len(m)-1
		}
	}
	return "", "", false
}
