"""The public functions of `geotter.data` refuse a bad argument at once, with an error that names it.

A sample file of another layout, a missing template, a registration of the wrong type, an 'st:' backbone without a
model id and fractional text labels: each raises a `ValueError` or `TypeError` naming the argument (never a bare
`KeyError` or `AttributeError`, never a silent result), and the valid calls beside them still give what they gave.
"""
import numpy as np
import pytest
import torch

from geotter import data as DA


class _TextModel:
    "A stand-in sentence encoder: the length of each text and a constant, as 2-D embeddings."
    def encode(self, texts, **kw): return torch.tensor([[float(len(t)), 1.0] for t in texts])

TEXT_ENCODER = DA.Encoder(DA.Backbone('fake-text', 'sentence-transformers', 'fake', modality='text'), _TextModel())


def test_load_sample_names_the_path_and_the_arrays_it_lacks(tmp_path):
    f = tmp_path / 'other.npz'
    np.savez(f, X=np.ones((3, 2), np.float16), labels=np.zeros(3, np.int16))
    with pytest.raises(ValueError, match=r"^path=") as info: DA.load_sample(f)
    msg = str(info.value)
    assert str(f) in msg and all(k in msg for k in ('Y', 'class_names', 'meta')), msg

def test_load_sample_still_reads_a_file_with_only_the_required_arrays(tmp_path):
    f = tmp_path / 'small.npz'
    np.savez(f, X=np.ones((3, 2), np.float16), Y=np.eye(2, dtype=np.float16), labels=np.array([0, 1, 1], np.int16),
             class_names=np.array(['a', 'b']), meta=np.array('{"source": "test"}'))
    t = DA.load_sample(f, name='small')
    assert (t.name, t.X.dtype, t.Y.dtype, t.labels.tolist(), t.class_names) == ('small', np.float32, np.float32, [0, 1, 1], ['a', 'b'])
    assert t.meta['source'] == 'test' and t.meta['texts'] is None and t.meta['Y_templates'] is None
    assert DA.load_sample().name == 'wordnet-sample'


@pytest.mark.parametrize('bad', [None, 3, 1.5])
def test_check_templates_names_the_argument(bad):
    with pytest.raises(TypeError, match=r"^templates="): DA.check_templates(bad)
    with pytest.raises(TypeError, match=r"^templates="): DA.check_template_arg(bad)

def test_check_templates_valid_calls_and_messages_unchanged():
    assert DA.check_templates(['a {}.', 'the {}.']) == ('a {}.', 'the {}.')
    assert DA.check_templates(np.array(['a {}.'])) == ('a {}.',)
    with pytest.raises(ValueError, match=r"^templates='a \{\}'; expected a non-empty list of strings$"): DA.check_templates('a {}')
    with pytest.raises(ValueError, match=r"^templates=\[\]; expected a non-empty list of strings$"): DA.check_templates([])
    with pytest.raises(ValueError, match="'no slot' must contain exactly one"): DA.check_templates(['no slot'])

@pytest.mark.parametrize('bad', [None, 3, ['a {}.']])
def test_class_prompts_names_the_template_argument(bad):
    with pytest.raises(TypeError, match=r"^template "): DA.class_prompts(['cat', 'dog'], bad)

def test_class_prompts_valid_call_unchanged():
    assert DA.class_prompts(['cat', 'dog'], 'a photo of a {}.') == ['a photo of a cat.', 'a photo of a dog.']


@pytest.mark.parametrize('bad', [None, 'ViT-B-16', {'name': 'x', 'family': 'open_clip'}])
def test_register_backbone_refuses_a_wrong_type_by_name(bad):
    before = dict(DA.BACKBONES)
    with pytest.raises(TypeError, match=r"^bb "): DA.register_backbone(bad)
    assert DA.BACKBONES == before

@pytest.mark.parametrize('bad', [None, 'cifar10', {'name': 'x', 'templates': ('a {}.',)}])
def test_register_dataset_refuses_a_wrong_type_by_name(bad):
    before = dict(DA.DATASETS)
    with pytest.raises(TypeError, match=r"^spec "): DA.register_dataset(bad)
    assert DA.DATASETS == before

def test_registrations_of_the_right_type_still_work():
    bb = DA.register_backbone(DA.Backbone('tmp-bb', 'open_clip', 'tmp'))
    spec = DA.register_dataset(DA.DatasetSpec('tmp-ds', 'folder', 'all', ('a {}.',)))
    try: assert DA.BACKBONES['tmp-bb'] is bb and DA.DATASETS['tmp-ds'] is spec
    finally: del DA.BACKBONES['tmp-bb'], DA.DATASETS['tmp-ds']


@pytest.mark.parametrize('spec', ['st:', 'st:/', 'st: ', 'st://'])
def test_get_backbone_refuses_an_st_spec_without_a_model_id(spec):
    with pytest.raises(ValueError, match=r"^backbone=") as info: DA.get_backbone(spec)
    assert repr(spec) in str(info.value), info.value

def test_get_backbone_refuses_other_prefixes_by_name():
    with pytest.raises(ValueError, match=r"^backbone='open_clip:'"): DA.get_backbone('open_clip:')

def test_get_backbone_valid_specs_unchanged():
    bb = DA.get_backbone('st:sentence-transformers/bert-base-nli-mean-tokens')
    assert (bb.name, bb.family, bb.model, bb.modality) == ('bert-base-nli-mean-tokens', 'sentence-transformers',
                                                          'sentence-transformers/bert-base-nli-mean-tokens', 'text')
    assert DA.get_backbone('st:org/model/').name == 'model' and DA.get_backbone('ViT-B/32').name == 'ViT-B-32'


@pytest.mark.parametrize('labels', [[0, 0.5], np.array([0.0, 1.5]), torch.tensor([0.25, 1.0]), [0, float('nan')]])
def test_extract_texts_refuses_fractional_labels_by_name(labels, tmp_path):
    with pytest.raises(TypeError, match=r"^labels "):
        DA.extract_texts(['a b', 'c'], labels, ['x', 'y'], ['{}'], 'docs', TEXT_ENCODER, store=tmp_path, progress=False)
    assert not any(tmp_path.iterdir())

@pytest.mark.parametrize('labels', [[0, 1], np.array([0.0, 1.0]), torch.tensor([0, 1]), (np.int16(0), np.int16(1))])
def test_extract_texts_accepts_integer_labels_as_before(labels, tmp_path):
    out = DA.extract_texts(['a b', 'c'], labels, ['x', 'y'], ['{}'], 'docs', TEXT_ENCODER, store=tmp_path, progress=False)
    t = DA.load_embeddings('docs', 'fake-text', tmp_path)
    assert out == DA.entry_dir('docs', 'fake-text', tmp_path) and t.labels.tolist() == [0, 1] and t.labels.dtype == np.int64
    np.testing.assert_allclose(t.X, TEXT_ENCODER.encode_texts(['a b', 'c']).numpy())

def test_extract_texts_length_message_unchanged(tmp_path):
    with pytest.raises(ValueError, match=r"^texts has 2 items but labels has 1$"):
        DA.extract_texts(['a', 'b'], [0], ['x', 'y'], ['{}'], 'docs', TEXT_ENCODER, store=tmp_path, progress=False)


def test_class_prompts_names_class_names():
    with pytest.raises(TypeError, match=r'^class_names=None; expected a list of class names'):
        DA.class_prompts(None, 'a photo of a {}.')


@pytest.mark.parametrize('kind', ['text', 'one array', 'folder'])
def test_load_sample_names_a_path_that_is_no_npz(tmp_path, kind):
    p = tmp_path / 'sample.npz'
    if kind == 'text': p.write_text('not an archive')
    elif kind == 'one array': np.save(tmp_path / 'a.npy', np.ones(3)); (tmp_path / 'a.npy').rename(p)
    else: p.mkdir()
    with pytest.raises(ValueError, match=r"^path='.*sample\.npz'.* not an \.npz archive"):
        DA.load_sample(p)
