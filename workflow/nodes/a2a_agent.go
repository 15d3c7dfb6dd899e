package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// a2aAgent calls a remote agent over A2A. Its executor comes with the A2A
// client issue.
func a2aAgent() workflow.Kind {
	return workflow.Kind{
		Type:               "a2a-agent",
		Doc:                "Sends the input to a remote agent over A2A.",
		IsExecutable:       true,
		RequiresImperative: true,
		IsAgentLike:        true,
		Unavailable:        "remote A2A agents arrive with the A2A client work",
		Config: []workflow.ConfigKey{
			{Name: "url", Type: workflow.TypeString, Required: true, Doc: "URL of the remote agent card"},
			{Name: "skill", Type: workflow.TypeString, Doc: "skill to invoke; default: the agent's default"},
			inputKey("message sent to the remote agent"),
		},
	}
}
