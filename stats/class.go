package stats

// StatusClass names a status class index of Snapshot.Responses as its
// JSON does: 2 is "2xx"; 0, and any index but 1 to 5, is "other".
func StatusClass(class int) string {
	if class < 1 || class > 5 {
		return "other"
	}
	return string(rune('0'+class)) + "xx"
}
