package format

import "testing"

// TestAgentsHandoffTool pins the default handoff tool names of both SDKs,
// which the trace export's handoff spans are read as.
func TestAgentsHandoffTool(t *testing.T) {
	for _, c := range []struct {
		agent string
		js    bool
		want  string
	}{
		{"Weather agent", true, "transfer_to_Weather_agent"},
		{"Weather agent", false, "transfer_to_weather_agent"},
		{"billing_bot-2", true, "transfer_to_billing_bot_2"},
		{"billing_bot-2", false, "transfer_to_billing_bot_2"},
		{"Météo 🌧", true, "transfer_to_M_t_o___"},
		{"Météo 🌧", false, "transfer_to_m_t_o__"},
	} {
		if got := agentsHandoffTool(c.agent, c.js); got != c.want {
			t.Errorf("agentsHandoffTool(%q, %v) = %q, want %q", c.agent, c.js, got, c.want)
		}
	}
}
