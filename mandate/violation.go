package mandate

// interactive_violation values.
const (
	ViolationBlock   = "block"
	ViolationApprove = "approve"
)

// Where an enforced interactive_violation comes from.
const (
	ViolationFromJob     = "job"     // set on the job (`tether mandate set`)
	ViolationFromProfile = "profile" // the profile's mandate.interactive_violation
	ViolationFromDefault = "default" // neither says: block
)

// ResolveViolation is the one rule for what an interactive run's call
// outside a job's mandate does: the job's own setting when it has one,
// else the profile's, else "block". It returns the value and where it
// comes from. jobValue is "" when the job has no setting. Any value other
// than "approve" blocks.
func ResolveViolation(jobValue, profileValue string) (value, source string) {
	switch {
	case jobValue != "":
		return normViolation(jobValue), ViolationFromJob
	case profileValue != "":
		return normViolation(profileValue), ViolationFromProfile
	}
	return ViolationBlock, ViolationFromDefault
}

func normViolation(v string) string {
	if v == ViolationApprove {
		return ViolationApprove
	}
	return ViolationBlock // fail closed on anything unexpected
}

func resolveViolation(j jobRow, profileValue string) (value, source string) {
	jv := ""
	if j.violationSet {
		jv = j.violations
	}
	return ResolveViolation(jv, profileValue)
}
