package transform

import (
	"fmt"
	"strings"
)

// github builds messages from GitHub webhooks (X-GitHub-Event).
func github(h Headers, body []byte) (*Message, error) {
	var e struct {
		Action     string `json:"action"`
		Ref        string `json:"ref"`
		Compare    string `json:"compare"`
		Repository struct {
			FullName string `json:"full_name"`
			HTMLURL  string `json:"html_url"`
		} `json:"repository"`
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
		Pusher struct {
			Name string `json:"name"`
		} `json:"pusher"`
		Commits []struct {
			ID      string `json:"id"`
			Message string `json:"message"`
		} `json:"commits"`
		PullRequest *pullRequest `json:"pull_request"`
		WorkflowRun *struct {
			Name       string `json:"name"`
			HeadBranch string `json:"head_branch"`
			Conclusion string `json:"conclusion"`
			Status     string `json:"status"`
			HTMLURL    string `json:"html_url"`
		} `json:"workflow_run"`
		CheckSuite *struct {
			HeadBranch string `json:"head_branch"`
			Conclusion string `json:"conclusion"`
			Status     string `json:"status"`
		} `json:"check_suite"`
		Release *release `json:"release"`
		Issue   *issue   `json:"issue"`
	}
	if err := decodeBody(body, &e); err != nil {
		return nil, err
	}
	repo := e.Repository.FullName
	switch event := h.Get("X-GitHub-Event"); event {
	case "ping", "":
		return nil, nil
	case "push":
		branch := strings.TrimPrefix(e.Ref, "refs/heads/")
		who := e.Pusher.Name
		if who == "" {
			who = e.Sender.Login
		}
		var b strings.Builder
		fmt.Fprintf(&b, "**%s** pushed %d commit(s) to `%s`", who, len(e.Commits), branch)
		commitList(&b, len(e.Commits), func(i int) (string, string) { return e.Commits[i].ID, e.Commits[i].Message })
		return &Message{Title: fmt.Sprintf("[%s] push to %s", repo, branch), Body: b.String(),
			URL: firstNonEmpty(e.Compare, e.Repository.HTMLURL), URLLabel: "View changes"}, nil
	case "pull_request":
		return e.PullRequest.message(repo, e.Action, e.Sender.Login)
	case "workflow_run":
		if e.WorkflowRun == nil {
			return nil, fmt.Errorf("workflow_run event without workflow_run")
		}
		w := e.WorkflowRun
		state := firstNonEmpty(w.Conclusion, w.Status)
		return &Message{Title: fmt.Sprintf("[%s] %s %s", repo, w.Name, state),
			Body:     fmt.Sprintf("Workflow **%s** on `%s`: %s", w.Name, w.HeadBranch, state),
			Priority: priorityFor(w.Conclusion), URL: w.HTMLURL, URLLabel: "Open run"}, nil
	case "check_suite":
		if e.CheckSuite == nil {
			return nil, fmt.Errorf("check_suite event without check_suite")
		}
		state := firstNonEmpty(e.CheckSuite.Conclusion, e.CheckSuite.Status)
		return &Message{Title: fmt.Sprintf("[%s] checks %s", repo, state),
			Body:     fmt.Sprintf("Check suite on `%s`: %s", e.CheckSuite.HeadBranch, state),
			Priority: priorityFor(e.CheckSuite.Conclusion), URL: e.Repository.HTMLURL, URLLabel: "Open repository"}, nil
	case "release":
		return e.Release.message(repo, e.Action)
	case "issues":
		return e.Issue.message(repo, e.Action, e.Sender.Login)
	default:
		return nil, nil
	}
}

// vercel builds messages from Vercel deployment webhooks.
func vercel(_ Headers, body []byte) (*Message, error) {
	var e struct {
		Type    string `json:"type"`
		Payload struct {
			Deployment struct {
				URL  string `json:"url"`
				Name string `json:"name"`
			} `json:"deployment"`
			Name   string `json:"name"`
			Target string `json:"target"`
			Links  struct {
				Deployment string `json:"deployment"`
			} `json:"links"`
		} `json:"payload"`
	}
	if err := decodeBody(body, &e); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(e.Type, "deployment.") {
		return nil, nil
	}
	state := strings.TrimPrefix(e.Type, "deployment.")
	name := firstNonEmpty(e.Payload.Name, e.Payload.Deployment.Name)
	target := firstNonEmpty(e.Payload.Target, "preview")
	m := &Message{Title: fmt.Sprintf("Vercel: %s %s", name, state),
		Body: fmt.Sprintf("Deployment of **%s** (%s): %s", name, target, state), URLLabel: "Open deployment",
		URL: firstNonEmpty(e.Payload.Links.Deployment, httpsURL(e.Payload.Deployment.URL))}
	if state == "error" || state == "canceled" {
		m.Priority = "high"
	}
	return m, nil
}

// netlify builds messages from Netlify deploy notifications.
func netlify(_ Headers, body []byte) (*Message, error) {
	var e struct {
		State        string `json:"state"`
		Name         string `json:"name"`
		Branch       string `json:"branch"`
		DeploySSLURL string `json:"deploy_ssl_url"`
		AdminURL     string `json:"admin_url"`
		ErrorMessage string `json:"error_message"`
		ID           string `json:"id"`
	}
	if err := decodeBody(body, &e); err != nil {
		return nil, err
	}
	if e.State == "" {
		return nil, nil
	}
	m := &Message{Title: fmt.Sprintf("Netlify: %s %s", e.Name, e.State),
		Body: fmt.Sprintf("Deploy of **%s** from `%s`: %s", e.Name, e.Branch, e.State), URLLabel: "Open deploy",
		URL: firstNonEmpty(e.DeploySSLURL, e.AdminURL)}
	if e.State == "error" {
		m.Priority = "high"
		if e.ErrorMessage != "" {
			m.Body += "\n\n" + e.ErrorMessage
		}
	}
	return m, nil
}

func priorityFor(conclusion string) string {
	switch conclusion {
	case "failure", "timed_out", "startup_failure", "action_required":
		return "high"
	}
	return "normal"
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func httpsURL(host string) string {
	if host == "" || strings.Contains(host, "://") {
		return host
	}
	return "https://" + host
}
