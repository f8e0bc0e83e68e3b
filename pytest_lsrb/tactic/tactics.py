"""The words that start a Lean 4 tactic: what `valid` checks an answer's first token against.

Source, and the Lean/Mathlib version it describes:

- `MATHLIB_2023_09`: the tactic names `#help tactic` prints with `import Mathlib.Tactic` (Lean 4
  core, Std and Mathlib) at mathlib4 rev c161d1800ce3788307e2d726b7a265549a1c04d7 (2023-09-06),
  as published in haruhisa-enomoto/mathlib4-all-tactics `all-tactics.md` (one `# name` heading
  per syntax). Symbols and multi-word headings (`(`, `_`, `·`, `#find`, `t <;> [...]`) are left
  out: the reader handles parentheses, bullets and combinators itself.
- `LATER`: tactics added to Lean 4 core and Mathlib after that revision, each checked against
  the `syntax`/`macro` declaration in the source named beside it (leanprover/lean4
  `src/Init/Tactics.lean` at the version with `DecideConfig` (Lean >= 4.12), `src/Init/Grind/`,
  `src/Std/Tactic/BVDecide/`; Mathlib `Mathlib/Tactic/`).

A word that is not here can still be a tactic (a project's own `macro`, a newer Mathlib): such an
answer is `valid = false` and still goes to Lean when verification is on (Lean decides); without
Lean, `valid` is the only check there is, and prose such as `h : 12,000,001` or `p : Prop` must
not pass it.
"""

from __future__ import annotations

from typing import Final

MATHLIB_2023_09: Final = """
abel abel! abel1 abel1! abel_nf abel_nf! absurd ac_change ac_rfl admit aesop aesop? aesop_cases
aesop_cat aesop_cat? aesop_cat_nonterminal aesop_destruct_products aesop_split_hyps aesop_subst
aesop_unfold all_goals any_goals apply apply? apply_assumption apply_ext_lemma apply_fun
apply_mod_cast apply_rules array_get_dec assumption assumption' assumption_mod_cast aux_group₁
aux_group₂ bddDefault beta_reduce bicategory_coherence bitwise_assoc_tac by_cases by_contra
by_contra' calc cancel_denoms case case' cases cases' cases_type cases_type! casesm change change?
checkpoint choose choose! classical classical! clear clear! clear_ clear_aux_decl clear_value
coherence compareOfLessAndEq_rfl compute_degree compute_degree! congr congr! congrm constructor
constructorm continuity continuity? contradiction contrapose contrapose! conv conv' conv_lhs
conv_rhs convert convert_to dbg_trace decide decreasing_tactic decreasing_trivial decreasing_with
delta discrete_cases done dsimp dsimp! dsimp? dsimp?! eapply econstructor elementwise elementwise!
eq_refl erw eta_expand eta_reduce eta_struct exact exact!? exact? exact?! exact_mod_cast exacts
exfalso exists existsi ext ext1 ext1? ext? extract_goal extract_lets fail fail_if_no_progress
fail_if_success fapply fconstructor field_simp filter_upwards fin_cases find first focus frac_tac
funext gcongr gcongr_discharger generalize generalize_proofs get_elem_tactic
get_elem_tactic_trivial group guard_expr guard_goal_nums guard_hyp guard_hyp_nums guard_target
have have!? have' have? have?! haveI if induction induction' infer_instance infer_param inhabit
injection injections interval_cases intro intros introv isBoundedDefault iterate left let let'
letI library_search lift lift_lets liftable_prefixes linarith linarith! linear_combination
linear_combination2 map_tacs match match_target measurability measurability! measurability!?
measurability? mfld_set_tac mod_cases mono monoidal_coherence native_decide next nlinarith
nlinarith! noncomm_ring nontriviality norm_cast norm_cast0 norm_num norm_num1 nth_rewrite nth_rw
observe observe? obtain on_goal open pick_goal polyrith positivity pure_coherence push_cast
push_neg qify rcases rcongr recover reduce refine refine' refine_lift refine_lift' rel rename
rename' rename_bvar rename_i repeat repeat' repeat1 replace revert rewrite rfl rfl' right ring
ring! ring1 ring1! ring1_nf ring1_nf! ring_nf ring_nf! rintro rotate_left rotate_right rsuffices
run_tac rw rw!? rw? rw?! rw_mod_cast rwa save set set! set_option show show_term simp simp! simp?
simp?! simp_all simp_all! simp_all? simp_all?! simp_all_arith simp_all_arith! simp_arith
simp_arith! simp_intro simp_rw simp_wf simpa simpa! simpa? simpa?! sizeOf_list_dec skip sleep
slice_lhs slice_rhs slim_check smul_tac solve solve_by_elim sorry specialize split split_ands
split_ifs squeeze_scope stop subst subst_eqs subst_vars substs success_if_fail_with_msg suffices
swap swap_var symm symm_saturate tauto tfae_finish tfae_have trace trace_state trans transitivity
triv trivial try type_check unfold unfold_let unfold_projs unhygienic unit_interval unreachable!
use use! use_discharger use_finite_instance whisker_simps whnf with_panel_widgets with_reducible
with_reducible_and_instances with_unfolding_all wlog zify
"""

# name -> where its declaration was read (see the module docstring)
LATER: Final[dict[str, str]] = {
    "omega": 'lean4 src/Init/Tactics.lean: syntax (name := omega) "omega" optConfig',
    "bv_omega": 'lean4 src/Init/Tactics.lean: macro "bv_omega"',
    "and_intros": 'lean4 src/Init/Tactics.lean: syntax "and_intros"',
    "nofun": 'lean4 src/Init/Tactics.lean: macro "nofun"',
    "nomatch": 'lean4 src/Init/Tactics.lean: macro "nomatch "',
    "fun_induction": 'lean4 src/Init/Tactics.lean: syntax (name := funInduction) "fun_induction "',
    "false_or_by_contra": "lean4 src/Init/Tactics.lean: syntax (name := falseOrByContra)",
    "apply_rfl": 'lean4 src/Init/Tactics.lean: syntax (name := applyRfl) "apply_rfl"',
    "ac_nf": 'lean4 src/Init/Tactics.lean: macro "ac_nf"',
    "grind": 'lean4 src/Init/Grind/Tactics.lean: syntax (name := grind) "grind"',
    "lia": "lean4 src/Init/Grind/Tactics.lean: `lia` (cutsat's successor)",
    "cutsat": 'lean4 src/Init/Grind/Tactics.lean: syntax (name := cutsat) "cutsat"',
    "bv_decide": 'lean4 src/Std/Tactic/BVDecide/Syntax.lean: syntax (name := bvDecide) "bv_decide"',
    "bv_decide?": 'lean4 src/Std/Tactic/BVDecide/Syntax.lean: syntax (name := bvTrace) "bv_decide?"',
    "fun_prop": 'Mathlib/Tactic/FunProp/Elab.lean: syntax (name := funPropTacStx) "fun_prop"',
    "by_contra!": 'Mathlib/Tactic/ByContra.lean: syntax (name := byContra!) "by_contra!"',
    "rify": 'Mathlib/Tactic/Rify.lean: syntax (name := rify) "rify"',
    "order": 'Mathlib/Tactic/Order.lean: elab "order" : tactic',
}

TACTIC_KEYWORDS: Final[frozenset[str]] = frozenset(MATHLIB_2023_09.split()) | frozenset(LATER)


def is_tactic_keyword(word: str) -> bool:
    return word in TACTIC_KEYWORDS
