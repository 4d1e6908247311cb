# Authors: The skforget developers
# SPDX-License-Identifier: BSD-3-Clause
"""Prediction certificates of a pipeline's final step, on raw records.

A mixin of :class:`~skforget.pipeline.ForgetPipeline`: each method checks the
pipeline is fitted with public preprocessing only (a neighbouring database
changes a private step's released statistics as well as the model, which the
final step's certificate does not cover), maps the records through the
preprocessing and asks the final step.
"""

from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted


def final_estimator_has(attr):
    """``available_if`` test: the final step has ``attr``."""
    def check(self):
        # Raise the final step's own AttributeError when it lacks ``attr``.
        getattr(self._final_estimator, attr)
        return True

    return check


class PipelineCertificates:
    """The final step's certificates on raw records (needs the pipeline's
    ``_final_estimator``, ``_preprocess`` and ``_refuse_if_private``)."""

    @available_if(final_estimator_has("certified_radius"))
    def certified_radius(self, k=0, mode="remove", **kwargs):
        """The final step's :meth:`~skforget.NoisyGDClassifier.certified_radius`.

        The preprocessing is public, so the ball around the coefficients is
        the final step's own.

        Parameters
        ----------
        k : int, default=0
            Number of records removed, replaced or added.
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        **kwargs : dict
            ``data_dependent`` and ``include_forgotten``, as for the final step.

        Returns
        -------
        radius : float or ndarray of shape (n_classes,)

        Examples
        --------
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> from skforget.pipeline import make_forget_pipeline
        >>> from skforget.preprocessing import PublicScaler
        >>> d = load_dataset("breast_cancer")
        >>> pipe = make_forget_pipeline(
        ...     PublicScaler(center=0.0, scale=1.0),
        ...     NoisyGDClassifier(classes=[0, 1], random_state=0))
        >>> pipe = pipe.fit(d.data, d.target)
        >>> pipe.certified_radius(1) == pipe[-1].certified_radius(1)
        True
        """
        check_is_fitted(self, "public_preprocessing_")
        self._refuse_if_private("certified_radius")
        return self._final_estimator.certified_radius(k, mode, **kwargs)

    @available_if(final_estimator_has("certify"))
    def certify(self, X, k=0, mode="remove", **kwargs):
        """Which predictions on raw records no neighbouring database of size
        ``k`` can change: :meth:`~skforget.NoisyGDClassifier.certify` of the
        final step on the preprocessed records.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw records, as for :meth:`predict`.
        k : int, default=0
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        **kwargs : dict
            ``tol``, ``data_dependent`` and ``include_forgotten``, as for the
            final step.

        Returns
        -------
        certified : ndarray of bool of shape (n_samples,)

        Examples
        --------
        >>> from skforget import NoisyGDClassifier
        >>> from skforget.datasets import load_dataset
        >>> from skforget.pipeline import make_forget_pipeline
        >>> from skforget.preprocessing import PublicScaler
        >>> d = load_dataset("breast_cancer")
        >>> pipe = make_forget_pipeline(
        ...     PublicScaler(center=0.0, scale=1.0),
        ...     NoisyGDClassifier(classes=[0, 1], random_state=0))
        >>> pipe = pipe.fit(d.data, d.target)
        >>> bool(pipe.certify(d.data[:5], k=1).all())
        True
        """
        check_is_fitted(self, "public_preprocessing_")
        self._refuse_if_private("certify")
        return self._final_estimator.certify(self._preprocess(X), k, mode, **kwargs)

    @available_if(final_estimator_has("certified_k"))
    def certified_k(self, X, mode="remove", **kwargs):
        """The final step's :meth:`~skforget.NoisyGDClassifier.certified_k` on
        the preprocessed records: per raw record, the largest certified ``k``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw records.
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        **kwargs : dict
            As for the final step.

        Returns
        -------
        k : ndarray of int of shape (n_samples,)
        """
        check_is_fitted(self, "public_preprocessing_")
        self._refuse_if_private("certified_k")
        return self._final_estimator.certified_k(self._preprocess(X), mode, **kwargs)

    @available_if(final_estimator_has("decision_function_bounds"))
    def decision_function_bounds(self, X, k=0, mode="remove", **kwargs):
        """The final step's
        :meth:`~skforget.NoisyGDClassifier.decision_function_bounds` on the
        preprocessed records.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw records.
        k : int, default=0
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        **kwargs : dict
            As for the final step.

        Returns
        -------
        lower, upper : ndarray
            Shaped like :meth:`decision_function`.
        """
        check_is_fitted(self, "public_preprocessing_")
        self._refuse_if_private("decision_function_bounds")
        return self._final_estimator.decision_function_bounds(
            self._preprocess(X), k, mode, **kwargs)

    @available_if(final_estimator_has("predict_bounds"))
    def predict_bounds(self, X, k=0, mode="remove", **kwargs):
        """The final step's :meth:`~skforget.NoisyGDRegressor.predict_bounds` on
        the preprocessed records.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Raw records.
        k : int, default=0
        mode : {"remove", "replace", "add", "add_remove"}, default="remove"
        **kwargs : dict
            As for the final step.

        Returns
        -------
        lower, upper : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "public_preprocessing_")
        self._refuse_if_private("predict_bounds")
        return self._final_estimator.predict_bounds(self._preprocess(X), k, mode,
                                                     **kwargs)
