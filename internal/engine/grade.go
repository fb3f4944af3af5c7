package engine

// Grade is a letter grade A-F derived from a composite score.
type Grade string

// The grades, best first.
const (
	GradeA Grade = "A"
	GradeB Grade = "B"
	GradeC Grade = "C"
	GradeD Grade = "D"
	GradeF Grade = "F"
)

// scoreSlack is the tolerance applied to every grade bound and to the
// passing score (SPEC section 3).
const scoreSlack = 1e-9

// GradeFor returns the grade of a composite score: A >= 0.9, B >= 0.8,
// C >= 0.7, D >= 0.6, else F, each bound compared with 1e-9 slack. (The
// reference grades 0.8999999999999999 B; SPEC section 3 marks this as a
// deliberate deviation.)
func GradeFor(score float64) Grade {
	switch {
	case score >= 0.9-scoreSlack:
		return GradeA
	case score >= 0.8-scoreSlack:
		return GradeB
	case score >= 0.7-scoreSlack:
		return GradeC
	case score >= 0.6-scoreSlack:
		return GradeD
	}
	return GradeF
}

// PassesMinScore reports whether score >= minScore - 1e-9.
func PassesMinScore(score, minScore float64) bool {
	return score >= minScore-scoreSlack
}
