package nodes

import "github.com/agentcraftlab/agentcraft/workflow"

// human parks the run until a person answers.
func human() workflow.Kind {
	return workflow.Kind{
		Type:               "human",
		Doc:                "Pauses the run until a person answers, optionally through a form.",
		Execute:            execHuman,
		IsExecutable:       true,
		RequiresImperative: true,
		Config: []workflow.ConfigKey{
			{Name: "prompt", Type: workflow.TypeTemplate, Required: true, Doc: "what the person is asked"},
			{Name: "form_schema", Type: workflow.TypeObject, Doc: "JSON Schema of the answer form; default: free text"},
			{Name: "timeout", Type: workflow.TypeDuration, Doc: "how long to wait before the run fails; default: no limit"},
		},
	}
}
