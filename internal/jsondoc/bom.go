package jsondoc

// BOMLen returns the length of the UTF-8 byte order mark (U+FEFF) that
// starts s, or 0 when s does not start with one. The readers of JSON
// documents (the CLI's files, the service's request bodies) skip that
// mark: s[BOMLen(s):] is the document's text.
func BOMLen[T ~string | ~[]byte](s T) int {
	if len(s) >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF {
		return 3
	}
	return 0
}
