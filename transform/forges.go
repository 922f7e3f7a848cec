package transform

import (
	"fmt"
	"strings"
)

// giteaUser is a Gitea (or Forgejo) user as webhooks show one.
type giteaUser struct {
	Login    string `json:"login"`
	Username string `json:"username"`
}

func (u *giteaUser) name() string {
	if u == nil {
		return ""
	}
	return firstNonEmpty(u.Login, u.Username)
}

// gitea builds messages from Gitea and Forgejo webhooks: push, pull
// request, issues, release, and finished Actions runs and jobs. Forgejo sends X-Forgejo-Event beside
// X-Gitea-Event.
func gitea(h Headers, body []byte) (*Message, error) {
	var e struct {
		Action     string `json:"action"`
		Ref        string `json:"ref"`
		CompareURL string `json:"compare_url"`
		Commits    []struct {
			ID      string `json:"id"`
			Message string `json:"message"`
		} `json:"commits"`
		TotalCommits int `json:"total_commits"`
		Repository   struct {
			FullName string `json:"full_name"`
			HTMLURL  string `json:"html_url"`
		} `json:"repository"`
		Pusher      *giteaUser   `json:"pusher"`
		Sender      *giteaUser   `json:"sender"`
		PullRequest *pullRequest `json:"pull_request"`
		Issue       *issue       `json:"issue"`
		Release     *release     `json:"release"`
		WorkflowRun *giteaRun    `json:"workflow_run"`
		WorkflowJob *giteaRun    `json:"workflow_job"`
	}
	if err := decodeBody(body, &e); err != nil {
		return nil, err
	}
	repo := e.Repository.FullName
	action := firstNonEmpty(e.Action, "updated")
	switch firstNonEmpty(h.Get("X-Forgejo-Event"), h.Get("X-Gitea-Event")) {
	case "push":
		branch := strings.TrimPrefix(e.Ref, "refs/heads/")
		n := max(e.TotalCommits, len(e.Commits))
		var b strings.Builder
		fmt.Fprintf(&b, "**%s** pushed %d commit(s) to `%s`", firstNonEmpty(e.Pusher.name(), e.Sender.name()), n, branch)
		commitList(&b, len(e.Commits), func(i int) (string, string) { return e.Commits[i].ID, e.Commits[i].Message })
		return &Message{Title: fmt.Sprintf("[%s] push to %s", repo, branch), Body: b.String(),
			URL: firstWebURL(e.CompareURL, e.Repository.HTMLURL), URLLabel: "View changes"}, nil
	case "pull_request":
		return e.PullRequest.message(repo, action, e.Sender.name())
	case "issues":
		return e.Issue.message(repo, action, e.Sender.name())
	case "release":
		return e.Release.message(repo, action)
	case "workflow_run":
		return e.WorkflowRun.message(repo, "Workflow", action)
	case "workflow_job":
		return e.WorkflowJob.message(repo, "Job", action)
	}
	return nil, nil
}

// giteaRun is an Actions workflow run or job as Gitea and Forgejo send it.
type giteaRun struct {
	DisplayTitle string `json:"display_title"` // runs
	Name         string `json:"name"`          // jobs
	HeadBranch   string `json:"head_branch"`
	Status       string `json:"status"`
	Conclusion   string `json:"conclusion"`
	HTMLURL      string `json:"html_url"`
}

// message is for a finished run or job only: queued, waiting and
// in_progress would make a notification per step of every build.
func (r *giteaRun) message(repo, kind, action string) (*Message, error) {
	if r == nil {
		return nil, fmt.Errorf("%s event without its %s", strings.ToLower(kind), strings.ToLower(kind))
	}
	if action != "completed" {
		return nil, nil
	}
	name := firstNonEmpty(r.DisplayTitle, r.Name, kind)
	state := firstNonEmpty(r.Conclusion, r.Status, action)
	title := fmt.Sprintf("%s %s", name, state)
	if repo != "" {
		title = fmt.Sprintf("[%s] %s", repo, title)
	}
	body := fmt.Sprintf("%s **%s**: %s", kind, name, state)
	if r.HeadBranch != "" {
		body = fmt.Sprintf("%s **%s** on `%s`: %s", kind, name, r.HeadBranch, state)
	}
	return &Message{Title: title, Body: body, Priority: priorityFor(r.Conclusion), URL: r.HTMLURL, URLLabel: "Open run"}, nil
}

// pullRequest, issue and release are parts of GitHub's webhooks that Gitea
// and Forgejo copy field for field.
type pullRequest struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	HTMLURL string `json:"html_url"`
	Merged  bool   `json:"merged"`
}

type issue struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	HTMLURL string `json:"html_url"`
}

type release struct {
	TagName string `json:"tag_name"`
	Name    string `json:"name"`
	HTMLURL string `json:"html_url"`
}

func (p *pullRequest) message(repo, action, who string) (*Message, error) {
	if p == nil {
		return nil, fmt.Errorf("pull_request event without pull_request")
	}
	if action == "closed" && p.Merged {
		action = "merged"
	}
	return &Message{Title: fmt.Sprintf("[%s] PR #%d %s", repo, p.Number, action),
		Body: fmt.Sprintf("**%s** by %s", p.Title, who), URL: p.HTMLURL, URLLabel: "Open pull request"}, nil
}

func (i *issue) message(repo, action, who string) (*Message, error) {
	if i == nil {
		return nil, fmt.Errorf("issues event without issue")
	}
	return &Message{Title: fmt.Sprintf("[%s] issue #%d %s", repo, i.Number, action),
		Body: fmt.Sprintf("**%s** by %s", i.Title, who), URL: i.HTMLURL, URLLabel: "Open issue"}, nil
}

func (r *release) message(repo, action string) (*Message, error) {
	if r == nil {
		return nil, fmt.Errorf("release event without release")
	}
	return &Message{Title: fmt.Sprintf("[%s] release %s %s", repo, r.TagName, action),
		Body: fmt.Sprintf("**%s** (%s)", firstNonEmpty(r.Name, r.TagName), r.TagName), URL: r.HTMLURL, URLLabel: "Open release"}, nil
}

// commitList appends up to five commits (short id and first line) to b.
func commitList(b *strings.Builder, n int, commit func(i int) (id, message string)) {
	for i := range n {
		if i == 5 {
			fmt.Fprintf(b, "\n- and %d more", n-5)
			return
		}
		id, msg := commit(i)
		first, _, _ := strings.Cut(msg, "\n")
		fmt.Fprintf(b, "\n- `%s` %s", short(id), first)
	}
}

// gitlab builds messages from GitLab webhooks: push, merge request and
// pipeline (the body's object_kind).
func gitlab(_ Headers, body []byte) (*Message, error) {
	var e struct {
		ObjectKind   string `json:"object_kind"`
		Before       string `json:"before"`
		After        string `json:"after"`
		Ref          string `json:"ref"`
		UserName     string `json:"user_name"`
		TotalCommits int    `json:"total_commits_count"`
		Commits      []struct {
			ID      string `json:"id"`
			Message string `json:"message"`
		} `json:"commits"`
		User *struct {
			Name     string `json:"name"`
			Username string `json:"username"`
		} `json:"user"`
		Project struct {
			PathWithNamespace string `json:"path_with_namespace"`
			WebURL            string `json:"web_url"`
		} `json:"project"`
		Attrs *struct {
			ID             int    `json:"id"`
			IID            int    `json:"iid"`
			Title          string `json:"title"`
			Action         string `json:"action"`
			State          string `json:"state"`
			URL            string `json:"url"`
			SourceBranch   string `json:"source_branch"`
			TargetBranch   string `json:"target_branch"`
			Ref            string `json:"ref"`
			Status         string `json:"status"`
			DetailedStatus string `json:"detailed_status"`
			Duration       int    `json:"duration"`
		} `json:"object_attributes"`
	}
	if err := decodeBody(body, &e); err != nil {
		return nil, err
	}
	repo, a := e.Project.PathWithNamespace, e.Attrs
	if a == nil && (e.ObjectKind == "merge_request" || e.ObjectKind == "pipeline") {
		return nil, fmt.Errorf("%s event without object_attributes", e.ObjectKind)
	}
	who := e.UserName
	if e.User != nil {
		who = firstNonEmpty(e.User.Name, e.User.Username, who)
	}
	switch e.ObjectKind {
	case "push":
		branch := strings.TrimPrefix(e.Ref, "refs/heads/")
		var b strings.Builder
		fmt.Fprintf(&b, "**%s** pushed %d commit(s) to `%s`", who, max(e.TotalCommits, len(e.Commits)), branch)
		commitList(&b, len(e.Commits), func(i int) (string, string) { return e.Commits[i].ID, e.Commits[i].Message })
		url := e.Project.WebURL
		if e.Before != "" && e.After != "" && strings.Trim(e.Before, "0") != "" {
			url += "/-/compare/" + e.Before + "..." + e.After
		}
		return &Message{Title: fmt.Sprintf("[%s] push to %s", repo, branch), Body: b.String(),
			URL: url, URLLabel: "View changes"}, nil
	case "merge_request":
		action := firstNonEmpty(a.Action, a.State, "updated")
		return &Message{Title: fmt.Sprintf("[%s] MR !%d %s", repo, a.IID, action),
			Body: fmt.Sprintf("**%s** by %s\n`%s` → `%s`", a.Title, who, a.SourceBranch, a.TargetBranch),
			URL:  a.URL, URLLabel: "Open merge request"}, nil
	case "pipeline":
		state := firstNonEmpty(a.DetailedStatus, a.Status)
		m := &Message{Title: fmt.Sprintf("[%s] pipeline %s on %s", repo, state, a.Ref),
			Body: fmt.Sprintf("Pipeline #%d on `%s`: **%s**", a.ID, a.Ref, state),
			URL:  firstWebURL(a.URL, fmt.Sprintf("%s/-/pipelines/%d", e.Project.WebURL, a.ID)), URLLabel: "Open pipeline"}
		if a.Duration > 0 {
			m.Body += fmt.Sprintf(" in %ds", a.Duration)
		}
		if who != "" {
			m.Body += ", started by " + who
		}
		switch a.Status {
		case "failed":
			m.Priority = "high"
		case "running", "pending", "created":
			m.Priority = "low"
		}
		return m, nil
	}
	return nil, nil
}
