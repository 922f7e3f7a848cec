package service

import (
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// parseField parses one field of a template and prepares it to run under
// a renderBudget: every range iteration first calls _tick, every range's
// pipeline ends in _range, and every action that prints ends in _out.
// It refuses define, block, template, call, the functions it adds, and the
// number methods .Float64 and .Int64 (which parse a number as long as the
// body in one call no budget sees).
func parseField(name, src string) (*template.Template, error) {
	if n := len([]rune(src)); n > MaxTemplateField {
		return nil, invalid("template.%s is %d characters; the limit is %d", name, n, MaxTemplateField)
	}
	tm, err := template.New(name).Funcs(parseFuncs).Option("missingkey=zero").Parse(src)
	if err != nil {
		return nil, invalid("template.%s does not parse: %s", name, strings.TrimPrefix(err.Error(), "template: "))
	}
	if len(tm.Templates()) > 1 {
		return nil, invalid("template.%s: define and block are not allowed", name)
	}
	if tm.Tree == nil {
		return tm, nil
	}
	var (
		refused string
		prints  []*parse.ActionNode
		ranges  []*parse.RangeNode
	)
	refuse := func(what string) {
		if refused == "" {
			refused = what
		}
	}
	fields := func(idents []string) {
		for _, id := range idents {
			if id == "Float64" || id == "Int64" {
				refuse("." + id + " is not allowed (numbers are text: compare them with eq, print them as they are)")
			}
		}
	}
	walk(tm.Tree.Root, func(n parse.Node) {
		switch n := n.(type) {
		case *parse.TemplateNode:
			refuse("{{template}} is not allowed")
		case *parse.IdentifierNode:
			if n.Ident == "call" || strings.HasPrefix(n.Ident, "_") {
				refuse(n.Ident + " is not allowed")
			}
		case *parse.FieldNode:
			fields(n.Ident)
		case *parse.VariableNode:
			fields(n.Ident[1:])
		case *parse.ChainNode:
			fields(n.Field)
		case *parse.ActionNode:
			if len(n.Pipe.Decl) == 0 {
				prints = append(prints, n)
			}
		case *parse.RangeNode:
			ranges = append(ranges, n)
		}
	})
	if refused != "" {
		return nil, invalid("template.%s: %s", name, refused)
	}
	for _, n := range prints {
		n.Pipe.Cmds = append(n.Pipe.Cmds, outCmd)
	}
	for _, n := range ranges {
		n.Pipe.Cmds = append(n.Pipe.Cmds, rangeCmd)
		n.List.Nodes = append([]parse.Node{tickAction}, n.List.Nodes...)
	}
	return tm, nil
}

// The nodes parseField adds, parsed once; a run never changes a node, so
// every template shares them.
var (
	tickAction = parseAction("_tick")
	outCmd     = parseAction("_out").Pipe.Cmds[0]
	rangeCmd   = parseAction("_range").Pipe.Cmds[0]
)

func parseAction(fn string) *parse.ActionNode {
	t := template.Must(template.New(fn).Funcs(parseFuncs).Parse("{{" + fn + "}}"))
	return t.Tree.Root.Nodes[0].(*parse.ActionNode)
}

// walk calls f on every node under n: lists, branches, pipelines and
// their commands and arguments.
func walk(n parse.Node, f func(parse.Node)) {
	switch n := n.(type) {
	case nil:
		return
	case *parse.ListNode:
		if n == nil {
			return
		}
		f(n)
		for _, c := range n.Nodes {
			walk(c, f)
		}
		return
	case *parse.PipeNode:
		if n == nil {
			return
		}
		f(n)
		for _, v := range n.Decl {
			walk(v, f)
		}
		for _, c := range n.Cmds {
			walk(c, f)
		}
		return
	}
	f(n)
	switch n := n.(type) {
	case *parse.ActionNode:
		walk(n.Pipe, f)
	case *parse.TemplateNode:
		walk(n.Pipe, f)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, f)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, f)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, f)
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, f)
		}
	case *parse.ChainNode:
		walk(n.Node, f)
	}
}

func walkBranch(n *parse.BranchNode, f func(parse.Node)) {
	walk(n.Pipe, f)
	walk(n.List, f)
	walk(n.ElseList, f)
}

// errIterations is a render that looped more than MaxTemplateIterations
// times.
var errIterations = fmt.Errorf("more than %d loop iterations", MaxTemplateIterations)

// rangeKeyCost is what a range over an object costs a key: text/template
// sorts the keys first, 48 bytes a key.
const rangeKeyCost = 48

// tick runs first in every range iteration: it counts the iteration and
// checks the deadline, even in a loop that calls nothing else.
func (b *renderBudget) tick() (string, error) {
	if err := b.ctx.Err(); err != nil {
		return "", err
	}
	if b.iterations++; b.iterations > MaxTemplateIterations {
		return "", errIterations
	}
	return "", nil
}

// room ends every action that prints: it refuses, before fmt formats it, a
// value too large for what is left of the field's output. What is printed
// is charged as it is written.
func (b *renderBudget) room(v any) (any, error) {
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	left := MaxTemplateOutput - b.out.buf.Len()
	s := sizer{limit: left}
	if v == nil {
		s.n = len("<no value>")
	} else {
		s.text(v)
	}
	if s.over() {
		return nil, errOutput
	}
	return v, nil
}

// rangeOver ends every range's pipeline: ranging over an object sorts its
// keys first, which is charged.
func (b *renderBudget) rangeOver(v any) (any, error) {
	m, _ := v.(map[string]any)
	return v, b.spend(rangeKeyCost * len(m))
}
