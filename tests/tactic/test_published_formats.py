"""The answer reader on the output formats the provers and chat models people evaluate publish.

Each fixture names where its format (and, where one is published, its text) comes from: a model
card, a README, a repository's example output or released proofs. Texts quoted from a release are
shortened (a long proof keeps its first lines and its last); nothing else in them is changed.
One test per fixture: the tactic read (mode `tactic`), the proof read (mode `proof`) where the
format carries a whole proof, whether it is a Lean tactic (`valid`), and the rule that fired.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pytest_lsrb.tactic.answer import read_answer


@dataclass(frozen=True)
class Published:
    id: str
    source: str
    raw: str
    tactic: str
    valid: bool = True
    rule: str = ""  # a step that must appear in answer_format
    proof: str | None = None  # the proof body mode `proof` reads (None: not checked)
    sorry: bool = False


# -- Kimina-Prover Preview -----------------------------------------------------------------------
# MoonshotAI/Kimina-Prover-Preview minif2f_test_solved/minif2f-test-solved.jsonl (8dec4f5), the
# record of aime_1983_p1: `cot` is the model's output (a <think> block whose Lean pieces are
# ```tactics fences), `correct_proof` the final ```lean4 block. kimina_prover_demo/utils.py's
# extract_proof_from_text takes the last ```lean4 block holding theorem/by/:=/import.
KIMINA_HEAD = """import Mathlib
import Aesop

set_option maxHeartbeats 0

open BigOperators Real Nat Topology Rat


theorem aime_1983_p1 (x y z w : ℕ) (ht : 1 < x ∧ 1 < y ∧ 1 < z) (hw : 0 ≤ w)
    (h0 : Real.log w / Real.log x = 24) (h1 : Real.log w / Real.log y = 40)
    (h2 : Real.log w / Real.log (x * y * z) = 12) : Real.log w / Real.log z = 60 := by
"""
KIMINA_BODY = """
        have hx_pos : (x : ℝ) > (1 : ℝ) := by exact_mod_cast ht.left
        have hy_pos : (y : ℝ) > (1 : ℝ) := by exact_mod_cast ht.right.left

        have h31 : Real.log x ≠ 0 := by
            have h_log_x_pos : Real.log x > 0 := by
                apply Real.log_pos
                norm_num
                linarith
            linarith

        exact h9"""
KIMINA_THINK = """<think>
# Solving the Logarithm Problem

We have $\\log_x w = 24$, $\\log_y w = 40$, and $\\log_{xyz} w = 12$, and we need to find $\\log_z w$.

Let's verify this solution step by step in Lean 4:

```tactics
import Mathlib
import Aesop

set_option maxHeartbeats 0

open BigOperators Real Nat Topology Rat
```

```tactics
  have h3 : Real.log w = 24 * Real.log x := by
    have h31 : Real.log x ≠ 0 := by
```
</think>
"""
KIMINA_PROOF = """have hx_pos : (x : ℝ) > (1 : ℝ) := by exact_mod_cast ht.left
have hy_pos : (y : ℝ) > (1 : ℝ) := by exact_mod_cast ht.right.left

have h31 : Real.log x ≠ 0 := by
    have h_log_x_pos : Real.log x > 0 := by
        apply Real.log_pos
        norm_num
        linarith
    linarith

exact h9"""
KIMINA_SOURCE = (
    "MoonshotAI/Kimina-Prover-Preview minif2f_test_solved/minif2f-test-solved.jsonl (aime_1983_p1)"
)

# -- DeepSeek-Prover-V1.5 ------------------------------------------------------------------------
# deepseek-ai/DeepSeek-Prover-V1.5 quick_start.py (2c4ba91): the prompt ends inside a ```lean4
# fence after `... := by`; the "Expected output" is the proof body and the closing fence.
DSP15_OUTPUT = """  simp_all only [Nat.one_eq_succ_zero, Nat.zero_eq, zero_add, Nat.add_succ, Nat.add_zero,
    Nat.succ_add]
  have h₁' : a * r = 2 := by simpa [h₀] using h₁
  have h₂' : a * r ^ 3 = 6 := by simpa [h₀] using h₂
  have h₃ : r ^ 2 = 3 := by
    nlinarith
  have h₄ : a = 2 / Real.sqrt 3 ∨ a = -(2 / Real.sqrt 3) := by
    apply eq_or_eq_neg_of_sq_eq_sq <;>
    field_simp <;>
    nlinarith
  simpa [h₀] using h₄
```
"""
DSP15_PREFIX = """Complete the following Lean 4 code:

```lean4
import Mathlib
import Aesop

set_option maxHeartbeats 0

open BigOperators Real Nat Topology Rat

/-- The second and fourth terms of a geometric sequence are $2$ and $6$. \
Which of the following is a possible first term?
Show that it is $\\frac{2\\sqrt{3}}{3}$.-/
theorem amc12b_2003_p6 (a r : ℝ) (u : ℕ → ℝ) (h₀ : ∀ k, u k = a * r ^ k) (h₁ : u 1 = 2)
  (h₂ : u 3 = 6) : u 0 = 2 / Real.sqrt 3 ∨ u 0 = -(2 / Real.sqrt 3) := by
"""
DSP15_FIRST = """simp_all only [Nat.one_eq_succ_zero, Nat.zero_eq, zero_add, Nat.add_succ, Nat.add_zero,
  Nat.succ_add]"""
DSP15_PROOF = """simp_all only [Nat.one_eq_succ_zero, Nat.zero_eq, zero_add, Nat.add_succ, Nat.add_zero,
  Nat.succ_add]
have h₁' : a * r = 2 := by simpa [h₀] using h₁
have h₂' : a * r ^ 3 = 6 := by simpa [h₀] using h₂
have h₃ : r ^ 2 = 3 := by
  nlinarith
have h₄ : a = 2 / Real.sqrt 3 ∨ a = -(2 / Real.sqrt 3) := by
  apply eq_or_eq_neg_of_sq_eq_sq <;>
  field_simp <;>
  nlinarith
simpa [h₀] using h₄"""
DSP15_SOURCE = "deepseek-ai/DeepSeek-Prover-V1.5 quick_start.py (expected output)"

# -- DeepSeek-Prover-V2 --------------------------------------------------------------------------
# deepseek-ai/DeepSeek-Prover-V2 README (Quick Start: mathd_algebra_10 and the CoT prompt asking
# for "a detailed proof plan" before the Lean 4 code) and the paper (arXiv 2504.21801, §2.1: the
# plan's subgoals are `have ... := by sorry` in a Lean sketch, then the complete proof). Non-CoT
# mode answers with the completed ```lean4 block alone.
DSP2_STATEMENT = """import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

/-- What is the positive difference between $120\\%$ of 30 and $130\\%$ of 20? Show that it is 10.-/
theorem mathd_algebra_10 : abs ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by
"""
DSP2_SKETCH = f"""### Proof Plan

1. Compute the expression inside the absolute value: 36 - 26 = 10.
2. The absolute value of a nonnegative number is itself.

```lean4
{DSP2_STATEMENT}  have h₀ : ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by
    sorry
  have h₁ : abs ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by
    sorry
  sorry
```
"""
DSP2_COMPLETE = f"""### Complete Lean 4 Proof

```lean4
{DSP2_STATEMENT}  have h₀ : ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by
    norm_num
  rw [h₀]
  norm_num [abs_of_nonneg]
```
"""
DSP2_SOURCE = "deepseek-ai/DeepSeek-Prover-V2 README (Quick Start) + arXiv 2504.21801 §2.1"

# -- Goedel-Prover-V2 ----------------------------------------------------------------------------
# Goedel-LM/Goedel-Prover-V2 README (357c1fa): the same prompt as DeepSeek-Prover-V2's (a plan,
# then the Lean 4 code) on square_equation_solution; its proofs open with `have h_main ... := by`.
GOEDEL_STATEMENT = """import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat


theorem square_equation_solution {x y : ℝ} (h : x^2 + y^2 = 2*x - 4*y - 5) : x + y = -1 := by
"""
GOEDEL_MAIN = "have h_main : x + y = -1 := by\n  nlinarith [sq_nonneg (x - 1), sq_nonneg (y + 2)]"
GOEDEL_OUTPUT = f"""### Detailed Proof and Analysis

Completing squares gives (x - 1)^2 + (y + 2)^2 = 0, so x = 1 and y = -2.

### Lean 4 Proof with `have` Statements

```lean4
{GOEDEL_STATEMENT}  have h_main : x + y = -1 := by
    sorry
  sorry
```

### Complete Lean 4 Proof

```lean4
{GOEDEL_STATEMENT}  have h_main : x + y = -1 := by
    nlinarith [sq_nonneg (x - 1), sq_nonneg (y + 2)]
  exact h_main
```"""
GOEDEL_SOURCE = "Goedel-LM/Goedel-Prover-V2 README (Quick Start prompt and statement)"

# -- step provers --------------------------------------------------------------------------------
BFS_SOURCE = (
    "ByteDance-Seed/BFS-Prover-V1-7B model card: input `{state}:::`, the state echoed, then the tactic"
)
INTERNLM_SOURCE = "internlm/internlm2-step-prover model card (Dialogue Example)"
INTERNLM25_SOURCE = "internlm/internlm2_5-step-prover model card (Output example)"
LEANSTAR_SOURCE = "ScalableMath/Lean-STaR-plus model card (Example Results)"
R1_SOURCE = "deepseek-ai/DeepSeek-R1 chat template (it writes <think>; the reply starts inside it)"
SORRYDB_SOURCE = "SorryDB/SorryDB sorrydb/agents/rfl_strategy.py ProveAllStrategy._prove_all (a proof string)"
ISSUE_SOURCE = "issue #29: answers the review saw misread"

# -- completions stored stripped (issue #41) -----------------------------------------------------
# script-jpg/non-overlapping-failures (b163c44) data/proofs_miniF2F-test: completions of a prompt
# ending in `:= by`, stored as `generated_text[len(prompt):].strip()`, so the first line lost its
# two spaces. Goedel-Prover-SFT (V1) opens with its informal proof in a `/- ... -/` block.
NOF_SOURCE = "script-jpg/non-overlapping-failures data/proofs_miniF2F-test (b163c44)"
GOEDEL_V1_RAW = """/-
  To compute \\(91^2\\) in your head, we start by expressing \\(91\\) as a sum of two numbers.
  Applying this to our case, we get:
  \\[
  91^2 = (90 + 1)^2 = 90^2 + 2 \\cdot 90 \\cdot 1 + 1^2
  \\]
  Thus, we have shown that \\(91^2 = 8281\\).
  -/
  -- We start by expressing 91 as a sum of two numbers: 90 + 1.
  have h₁ : 91 = 90 + 1 := by norm_num
  -- Using the binomial expansion, we expand (90 + 1)^2.
  rw [h₁]
  -- We compute each term separately and add them together to get the final result.
  norm_num
```"""
DSP2_STRIPPED_RAW = """have h₁ : a ^ 2 + b ^ 2 = 1 := h₀
  have h₂ : a * b + |a - b| ≤ 1 := by
    cases' le_total 0 (a - b) with h h <;>
    simp_all only [abs_of_nonneg, abs_of_nonpos, sub_nonneg, sub_nonpos] <;>
    nlinarith [sq_nonneg (a + b), sq_nonneg (a - b)]
  exact h₂
```"""
DSP2_STRIPPED_NESTED = """have h₂ : n + 2 * x = 139 := by
    -- We need to find n + 2 * x
    -- Subtract the first equation from the second to eliminate n
    linarith
  -- The result is n + 2 * x = 139
  exact h₂"""
KIMINA_STRIPPED_RAW = """-- We have $3n \\equiv 2 \\pmod{11}$, as a residue modulo 11. Show that it is 8.

  have h₁ : n % 11 = 8 := by

    -- $n \\equiv 8 \\pmod{11}$

    omega

  exact h₁
```"""

FIXTURES = [
    Published(
        "kimina-think-then-lean4",
        KIMINA_SOURCE,
        f"{KIMINA_THINK}```lean4\n{KIMINA_HEAD}{KIMINA_BODY}\n```",
        "have hx_pos : (x : ℝ) > (1 : ℝ) := by exact_mod_cast ht.left",
        rule="think",
        proof=KIMINA_PROOF,
    ),
    Published(
        "kimina-reasoning-cut-off",
        KIMINA_SOURCE + " (cot cut at max_tokens inside <think>)",
        KIMINA_THINK.split("</think>")[0],
        "",
        valid=False,
        rule="think_cut",
    ),
    Published(
        "kimina-last-lean4-block-wins",
        KIMINA_SOURCE + "; kimina_prover_demo/utils.py extract_proof_from_text (the last block)",
        f"```lean4\n{KIMINA_HEAD}  nlinarith\n```\nThat fails; the corrected proof:\n"
        f"```lean4\n{KIMINA_HEAD}{KIMINA_BODY}\n```",
        "have hx_pos : (x : ℝ) > (1 : ℝ) := by exact_mod_cast ht.left",
        rule="fences",
    ),
    Published(
        "kimina-header-and-tactic-one-line",
        KIMINA_SOURCE + " (a one-line proof: `:= by tactic` on the header's line)",
        "```lean4\nimport Mathlib\nopen Real\n\ntheorem mathd_algebra_478 (b h v : ℝ) "
        "(h₀ : v = 1 / 3 * (b * h)) "
        "(h₁ : b = 30) (h₂ : h = 13 / 2) : v = 65 := by subst_vars; norm_num\n```",
        "subst_vars; norm_num",
        rule="header",
    ),
    Published(
        "dsp15-continuation",
        DSP15_SOURCE,
        DSP15_OUTPUT,
        DSP15_FIRST,
        rule="continuation",
        proof=DSP15_PROOF,
    ),
    Published(
        "dsp15-prompt-and-output",
        DSP15_SOURCE + " (`result` = prompt + code_prefix + output, as the script prints it)",
        DSP15_PREFIX + DSP15_OUTPUT,
        DSP15_FIRST,
        rule="header",
        proof=DSP15_PROOF,
    ),
    Published(
        "dsp2-cot-sketch-then-complete",
        DSP2_SOURCE,
        DSP2_SKETCH + "\n" + DSP2_COMPLETE,
        "have h₀ : ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by\n  norm_num",
        rule="fences",
        proof="have h₀ : ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by\n  norm_num\n"
        "rw [h₀]\nnorm_num [abs_of_nonneg]",
    ),
    Published(
        "dsp2-cot-sketch-only",
        DSP2_SOURCE + " (output cut before the complete proof)",
        DSP2_SKETCH,
        "have h₀ : ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by\n  sorry",
        valid=False,
        rule="fence_sketch",
        sorry=True,
    ),
    Published(
        "dsp2-non-cot",
        DSP2_SOURCE + " (non-CoT: the completed block alone)",
        f"```lean4\n{DSP2_STATEMENT}  norm_num [abs_of_nonneg]\n```",
        "norm_num [abs_of_nonneg]",
        rule="header",
        proof="norm_num [abs_of_nonneg]",
    ),
    Published(
        "dsp2-docstring-and-options-dropped",
        DSP2_SOURCE + " (the statement's /-- docstring -/ and set_option before the header)",
        f"```lean4\n{DSP2_STATEMENT}  rw [abs_of_nonneg] <;> norm_num\n```",
        "rw [abs_of_nonneg] <;> norm_num",
        rule="header",
    ),
    Published(
        "goedel-sketch-then-complete",
        GOEDEL_SOURCE,
        GOEDEL_OUTPUT,
        GOEDEL_MAIN,
        rule="fences",
        proof=GOEDEL_MAIN + "\nexact h_main",
    ),
    Published(
        "goedel-helper-lemma-first",
        GOEDEL_SOURCE + " (a helper lemma before the theorem: the theorem's own body is read)",
        "```lean4\nimport Mathlib\n\nlemma sq_sum_zero {a b : ℝ} (h : a ^ 2 + b ^ 2 = 0) : a = 0 := by\n"
        "  nlinarith [sq_nonneg a, sq_nonneg b]\n\n"
        "theorem square_equation_solution {x y : ℝ} (h : x^2 + y^2 = 2*x - 4*y - 5) : x + y = -1 := by\n"
        "  have hx : x - 1 = 0 := sq_sum_zero (b := y + 2) (by nlinarith)\n  linarith\n```",
        "have hx : x - 1 = 0 := sq_sum_zero (b := y + 2) (by nlinarith)",
        rule="header",
    ),
    Published(
        "bfs-prover-state-echo",
        BFS_SOURCE,
        "x : ℝ\nh₀ : x ^ 2 = 4\nh₁ : 0 < x\n⊢ x = 2:::nlinarith [sq_nonneg (x - 2), sq_nonneg (x + 2)]",
        "nlinarith [sq_nonneg (x - 2), sq_nonneg (x + 2)]",
        rule="state_echo",
    ),
    Published(
        "bfs-prover-tactic-only",
        BFS_SOURCE + " (a client that strips the echo)",
        "rw [Nat.add_comm]",
        "rw [Nat.add_comm]",
        rule="bare",
    ),
    Published(
        "internlm2-proofstep",
        INTERNLM_SOURCE,
        "PROOFSTEP induction n with t Ht",
        "induction n with t Ht",
        rule="proofstep",
    ),
    Published(
        "internlm25-tactic",
        INTERNLM25_SOURCE,
        "rw [← Nat.mod_add_div (2 * m + 1) 8]",
        "rw [← Nat.mod_add_div (2 * m + 1) 8]",
        rule="bare",
    ),
    Published(
        "lean-star-next-tactic-heading",
        LEANSTAR_SOURCE,
        "# State\nx : ℝ\nn : ℕ\nh₀ : -1 < x\nh₁ : 0 < n\n⊢ 1 + ↑n * x ≤ (1 + x) ^ n\n# Reasoning\n"
        "To prove the inequality involving the binomial expansion of `(1 + x)^n`, we start by "
        "considering the binomial expansion of `1 + x` raised to the power `n`.\n"
        "# Next Tactic\nhave h₂ : x = -1 + (x + 1) := by simp",
        "have h₂ : x = -1 + (x + 1) := by simp",
        rule="label",
    ),
    Published(
        "r1-opening-tag-in-template",
        R1_SOURCE,
        "Okay, so I need to show a^2 + b^2 ≥ 2ab. This is (a - b)^2 ≥ 0.\n</think>\n\n"
        "The next tactic is:\n\n```lean\nnlinarith [sq_nonneg (a - b), sq_nonneg (a + b)]\n```",
        "nlinarith [sq_nonneg (a - b), sq_nonneg (a + b)]",
        rule="think",
    ),
    Published(
        "r1-closed-think-bold-label",
        R1_SOURCE + " (a server that returns the tags)",
        "<think>\nThe goal is linear arithmetic over ℕ.\n</think>\n\n**Tactic:** `omega`",
        "omega",
        rule="label",
    ),
    Published(
        "r1-truncated-reasoning",
        R1_SOURCE + " (max_tokens reached inside the reasoning)",
        "<think>\nLet me try `simp` first, then maybe `omega` would",
        "",
        valid=False,
        rule="think_cut",
    ),
    Published(
        "r1-combinator-inline-code",
        ISSUE_SOURCE + " (`first | ...` was read as chatter)",
        "</think>\nUse `first | linarith | nlinarith [sq_nonneg (a - b)]`.",
        "first | linarith | nlinarith [sq_nonneg (a - b)]",
        rule="inline_code",
    ),
    Published(
        "chat-first-combinator-bare",
        ISSUE_SOURCE,
        "first | linarith | nlinarith [sq_nonneg (a - b)]",
        "first | linarith | nlinarith [sq_nonneg (a - b)]",
        rule="bare",
    ),
    Published(
        "chat-ascii-focusing-dot",
        ISSUE_SOURCE + " (`. linarith` read but valid = false)",
        ". linarith",
        ". linarith",
        rule="bare",
    ),
    Published(
        "chat-cdot-focusing",
        ISSUE_SOURCE,
        "· nlinarith [sq_nonneg (a - 1)]",
        "· nlinarith [sq_nonneg (a - 1)]",
        rule="bare",
    ),
    Published(
        "chat-prose-number-not-a-tactic",
        ISSUE_SOURCE + " (`h : 12,000,001` passed valid)",
        "h : 12,000,001",
        "h : 12,000,001",
        valid=False,
        rule="bare",
    ),
    Published(
        "chat-binder-not-a-tactic",
        ISSUE_SOURCE + " (`p : Prop` passed valid)",
        "p : Prop",
        "p : Prop",
        valid=False,
        rule="bare",
    ),
    Published(
        "chat-numbered-alternatives",
        ISSUE_SOURCE + " (numbered alternatives: the first is the answer)",
        "1. `nlinarith [sq_nonneg (a - b)]`\n2. `positivity`\n3. `linarith`",
        "nlinarith [sq_nonneg (a - b)]",
        rule="list",
        proof="nlinarith [sq_nonneg (a - b)]",
    ),
    Published(
        "chat-seq-focus-combinator",
        ISSUE_SOURCE + " (`<;>` stays in the tactic)",
        "```lean\nconstructor <;> linarith\n```",
        "constructor <;> linarith",
        rule="fence",
    ),
    Published(
        "chat-have-block-in-fence",
        ISSUE_SOURCE + " (a lone `have ... := by` never elaborates: its block comes with it)",
        "```lean\nhave h : 0 < x := by\n  positivity\nexact h\n```",
        "have h : 0 < x := by\n  positivity",
        rule="fence",
        proof="have h : 0 < x := by\n  positivity\nexact h",
    ),
    Published(
        "chat-have-block-unfenced",
        ISSUE_SOURCE + " (the same without a fence)",
        "have h : 0 < x := by\n  positivity\nexact h",
        "have h : 0 < x := by\n  positivity",
        rule="bare",
        proof="have h : 0 < x := by\n  positivity\nexact h",
    ),
    Published(
        "chat-term-proof-declaration",
        ISSUE_SOURCE + " (a declaration proved by a term)",
        "```lean4\ntheorem foo (a : ℕ) : a + 0 = a := Nat.add_zero a\n```",
        "exact Nat.add_zero a",
        rule="term",
    ),
    Published(
        "sorrydb-prove-all-proof-string",
        SORRYDB_SOURCE,
        "all_goals intros\nfirst | ((all_goals try rfl) ; (all_goals try simp_all)) | "
        "(all_goals ((try rfl) ; (try simp_all)))",
        "all_goals intros",
        rule="bare",
        proof="all_goals intros\nfirst | ((all_goals try rfl) ; (all_goals try simp_all)) | "
        "(all_goals ((try rfl) ; (try simp_all)))",
    ),
    Published(
        "kernel-bypass-reads-as-written",
        ISSUE_SOURCE + " (read as written; the guard refuses it: tests/tactic/test_guard.py)",
        "set_option debug.skipKernelTC true in exact (by decide +kernel : False).elim",
        "set_option debug.skipKernelTC true in exact (by decide +kernel : False).elim",
        rule="bare",
    ),
    Published(
        "goedel-v1-informal-comment-preamble",
        NOF_SOURCE + " 147/Goedel-LM_Goedel-Prover-SFT/9 (Goedel-Prover-SFT)",
        GOEDEL_V1_RAW,
        "have h₁ : 91 = 90 + 1 := by norm_num",
        rule="continuation",
        proof="have h₁ : 91 = 90 + 1 := by norm_num\nrw [h₁]\nnorm_num",
    ),
    Published(
        "deepseek-v2-stripped-first-indent",
        NOF_SOURCE + " 15/deepseek-ai_DeepSeek-Prover-V2-7B/10 (DeepSeek-Prover-V2)",
        DSP2_STRIPPED_RAW,
        "have h₁ : a ^ 2 + b ^ 2 = 1 := h₀",
        rule="continuation",
        proof=(
            "have h₁ : a ^ 2 + b ^ 2 = 1 := h₀\nhave h₂ : a * b + |a - b| ≤ 1 := by\n"
            "  cases' le_total 0 (a - b) with h h <;>\n"
            "  simp_all only [abs_of_nonneg, abs_of_nonpos, sub_nonneg, sub_nonpos] <;>\n"
            "  nlinarith [sq_nonneg (a + b), sq_nonneg (a - b)]\nexact h₂"
        ),
    ),
    Published(
        "deepseek-v2-stripped-first-indent-nested",
        NOF_SOURCE + " 33/deepseek-ai_DeepSeek-Prover-V2-7B/9 (DeepSeek-Prover-V2, no closing fence)",
        DSP2_STRIPPED_NESTED,
        "have h₂ : n + 2 * x = 139 := by\n  linarith",
        rule="bare",
        proof="have h₂ : n + 2 * x = 139 := by\n  linarith\nexact h₂",
    ),
    Published(
        "kimina-stripped-comment-first-line",
        NOF_SOURCE + " 82/AI-MO_Kimina-Prover-Preview-Distill-7B/20 (Kimina-Prover-Preview-Distill)",
        KIMINA_STRIPPED_RAW,
        "have h₁ : n % 11 = 8 := by\n  omega",
        rule="continuation",
        proof="have h₁ : n % 11 = 8 := by\n\n  omega\n\nexact h₁",
    ),
    Published(
        "comment-ending-in-colon-inside-a-proof",
        ISSUE_SOURCE.replace("#29", "#41") + " (`-- we get:` ended the proof in mode proof)",
        "```lean4\ntheorem t (a b : ℝ) (h : a = b) : b = a := by\n  -- From h we get:\n"
        "  have h' : b = a := h.symm\n  -- so we are done:\n  exact h'\n```",
        "have h' : b = a := h.symm",
        rule="header",
        proof="have h' : b = a := h.symm\nexact h'",
    ),
    Published(
        "root-sorryax-spelling",
        ISSUE_SOURCE + " (`_root_.sorryAx` passed the token guard)",
        "exact _root_.sorryAx _ false",
        "exact _root_.sorryAx _ false",
        valid=False,
        rule="bare",
        sorry=True,
    ),
]


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_published_format(fixture: Published) -> None:
    answer = read_answer(fixture.raw)
    assert answer.tactic == fixture.tactic, fixture.source
    assert answer.valid is fixture.valid, fixture.source
    assert answer.contains_sorry is fixture.sorry, fixture.source
    assert fixture.rule in answer.answer_format.split("+"), (answer.answer_format, fixture.source)
    if fixture.proof is not None:
        assert read_answer(fixture.raw, "proof").tactic == fixture.proof, fixture.source


def test_at_least_thirty_published_fixtures_from_every_family() -> None:
    assert len(FIXTURES) >= 30
    assert len({f.id for f in FIXTURES}) == len(FIXTURES)
    sources = " ".join(f.source for f in FIXTURES)
    for family in (
        "Kimina",
        "DeepSeek-Prover-V1.5",
        "DeepSeek-Prover-V2",
        "Goedel-Prover-V2",
        "BFS-Prover",
        "internlm2-step-prover",
        "DeepSeek-R1",
        "Goedel-Prover-SFT",
    ):
        assert family in sources, family
