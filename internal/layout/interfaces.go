package main

import (
	"go/token"
	"go/types"
)

// markInterfaceMethods marks the methods that complete an interface.
func markInterfaceMethods(m *module, used map[types.Object]bool) {
	mark := func(o types.Object) { markUsed(used, o) }
	ifaces := interfaces(m)
	for _, q := range m.Pkgs {
		var named []*types.Named
		for _, o := range q.Info.Defs {
			if tn, ok := o.(*types.TypeName); ok && !tn.IsAlias() {
				if n, ok := tn.Type().(*types.Named); ok && n.TypeParams().Len() == 0 {
					if _, isIface := n.Underlying().(*types.Interface); !isIface {
						named = append(named, n)
					}
				}
			}
		}
		for _, n := range named {
			var t types.Type = n
			if _, isPtr := n.Underlying().(*types.Pointer); !isPtr {
				t = types.NewPointer(n)
			}
			ms := types.NewMethodSet(t)
			if ms.Len() == 0 {
				continue
			}
			have := map[string]bool{}
			for i := 0; i < ms.Len(); i++ {
				have[ms.At(i).Obj().Name()] = true
			}
		next:
			for _, in := range ifaces {
				for i := 0; i < in.NumMethods(); i++ {
					if !have[in.Method(i).Name()] {
						continue next
					}
				}
				if !types.Implements(n, in) && !types.Implements(t, in) {
					continue
				}
				for i := 0; i < in.NumMethods(); i++ {
					im := in.Method(i)
					if o, _, _ := types.LookupFieldOrMethod(t, true, im.Pkg(), im.Name()); o != nil {
						mark(o)
					}
				}
			}
		}
	}
}

// interfaces returns the interfaces whose methods count as used when a
// type completes them: every interface type declared in or appearing in
// the module's non-test code (parameters, results and fields of what it
// uses included), and those stdInterfaces names.
func interfaces(m *module) []*types.Interface {
	set := map[*types.Interface]bool{}
	add := func(t types.Type) {
		if in, ok := t.Underlying().(*types.Interface); ok && in.IsMethodSet() && in.NumMethods() > 0 {
			if n, ok := t.(*types.Named); ok && n.TypeParams().Len() > 0 {
				return
			}
			set[in] = true
		}
	}
	for _, q := range m.users() {
		seen := map[types.Type]bool{}
		var walk func(t types.Type)
		walk = func(t types.Type) {
			if t == nil || seen[t] {
				return
			}
			seen[t] = true
			add(t)
			switch t := t.(type) {
			case *types.Pointer:
				walk(t.Elem())
			case *types.Slice:
				walk(t.Elem())
			case *types.Array:
				walk(t.Elem())
			case *types.Chan:
				walk(t.Elem())
			case *types.Map:
				walk(t.Key())
				walk(t.Elem())
			case *types.Signature:
				walk(t.Params())
				walk(t.Results())
			case *types.Tuple:
				for i := 0; i < t.Len(); i++ {
					walk(t.At(i).Type())
				}
			case *types.Struct:
				for i := 0; i < t.NumFields(); i++ {
					walk(t.Field(i).Type())
				}
			case *types.Named:
				if s, ok := t.Underlying().(*types.Struct); ok {
					walk(s)
				}
			}
		}
		for _, tv := range q.Info.Types {
			walk(tv.Type)
		}
		for _, o := range q.Info.Defs {
			if o != nil {
				walk(o.Type())
			}
		}
		for _, o := range q.Info.Uses {
			walk(o.Type())
		}
	}
	add(types.Universe.Lookup("error").Type())
	for _, in := range errorsInterfaces() {
		set[in] = true
	}
	for path, names := range stdInterfaces {
		for _, n := range names {
			if o := m.std[path].Scope().Lookup(n); o != nil {
				add(o.Type())
			}
		}
	}
	out := make([]*types.Interface, 0, len(set))
	for in := range set {
		out = append(out, in)
	}
	return out
}

// errorsInterfaces are the methods package errors asserts for (Unwrap,
// in both forms, Is and As), which no named interface declares.
func errorsInterfaces() []*types.Interface {
	errT := types.Universe.Lookup("error").Type()
	boolT := types.Typ[types.Bool]
	anyT := types.Universe.Lookup("any").Type()
	one := func(name string, param, result types.Type) *types.Interface {
		var params *types.Tuple
		if param != nil {
			params = types.NewTuple(types.NewVar(token.NoPos, nil, "", param))
		}
		sig := types.NewSignatureType(nil, nil, nil, params, types.NewTuple(types.NewVar(token.NoPos, nil, "", result)), false)
		return types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, name, sig)}, nil).Complete()
	}
	return []*types.Interface{
		one("Unwrap", nil, errT),
		one("Unwrap", nil, types.NewSlice(errT)),
		one("Is", errT, boolT),
		one("As", anyT, boolT),
	}
}
