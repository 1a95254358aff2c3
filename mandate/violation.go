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

// DescribeViolation is ResolveViolation for views: the enforced value and
// where it comes from, in words, for a job whose own setting is jobValue
// ("" for none) when the profile named profile has profileValue.
func DescribeViolation(jobValue, profile, profileValue string) (value, source string) {
	v, src := ResolveViolation(jobValue, profileValue)
	switch src {
	case ViolationFromJob:
		return v, "set on the job"
	case ViolationFromProfile:
		return v, "from profile " + profile + "'s mandate.interactive_violation; the job has no setting"
	}
	return v, "default; neither the job nor the profile sets it"
}

// JobView is a Job with the interactive_violation enforced for its calls
// under one profile, and where it comes from: what listings show.
type JobView struct {
	Job
	EnforcedViolation string `json:"interactive_violation_enforced"`
	ViolationSource   string `json:"interactive_violation_source"`
}

// ViewJobs returns js as views under the profile named profile, whose
// mandate.interactive_violation is profileValue. It never returns nil.
func ViewJobs(js []Job, profile, profileValue string) []JobView {
	out := make([]JobView, 0, len(js))
	for _, j := range js {
		v, src := DescribeViolation(j.InteractiveViolation, profile, profileValue)
		out = append(out, JobView{Job: j, EnforcedViolation: v, ViolationSource: src})
	}
	return out
}
